#pragma once
// The page `footprint report` fills in: HTML, CSS and the script that draws from the embedded
// JSON (html_report.cpp). Two placeholders, in this order: {{TITLE}} (HTML-escaped text) and
// {{DATA}} (JSON safe inside <script>).
#include <string_view>

namespace footprint::report {

std::string_view html_template();

}  // namespace footprint::report
