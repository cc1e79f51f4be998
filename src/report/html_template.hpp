#pragma once
// The page `footprint report` fills in: HTML, CSS and the script that draws from the embedded
// JSON (html_report.cpp). Two placeholders, in this order: {{TITLE}} (HTML-escaped text) and
// {{DATA}} (JSON safe inside <script>).
//
// The page is edited as report/page/report.html, report.css and report.js; the build joins them
// (report/page/embed.cmake) into the source that defines html_template(). Everything the page
// needs is in those files or in the JSON put at {{DATA}}: no fonts, scripts or styles from the
// network, so the file can be mailed, archived or opened offline. The script draws once,
// synchronously, then records how long the page took to be ready (performance.now(), after
// forcing layout) in <html data-render-ms>, which the browser test and bench/report_render.sh
// read back with `chromium --headless --dump-dom`.
#include <string_view>

namespace footprint::report {

std::string_view html_template();

}  // namespace footprint::report
