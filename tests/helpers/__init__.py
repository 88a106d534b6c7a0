"""What several test modules share: doubles, fixture builders, paths, runners.

Imported one way, ``from tests.helpers.<module> import ...``; a test module never
imports another.
"""
