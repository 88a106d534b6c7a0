// html-validate's rules for the report pages (tests/bench/report/test_report_a11y_tools.py passes this file
// with --config; `root` stops it from reading any other configuration).
//
// "html-validate:recommended" is the whole set the project holds its pages to: the HTML
// standard's content model, attributes and nesting, and the WCAG techniques html-validate
// checks (H30 link text, H32 submit buttons, H36 image buttons, H37 alt text, H63 header
// scope, H67 decorative images, H71 fieldset legends). No rule is turned off: every page
// of the benchmark, VAE and human-study reports passes all of them.
module.exports = {
  root: true,
  extends: ["html-validate:recommended"],
};
