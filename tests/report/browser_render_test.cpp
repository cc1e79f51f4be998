// The report as a browser shows it: `footprint report` writes the page, headless Chromium
// runs its script (which marks <html data-render-ms> when it has drawn everything) and takes a
// screenshot, and the screenshot must show a drawn page, not a blank one.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_runner.hpp"
#include "report/chromium.hpp"
#include "report/png_image.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

struct Rendered {
  double render_ms = -1;  // from data-render-ms; -1 when the script did not finish
  testing::PngCoverage coverage;
};

// Writes the report of `input`, then renders it twice: once for the DOM, once for pixels.
Rendered render(const std::filesystem::path& chromium, const std::string& input) {
  testing::TempDir dir;
  const auto html = dir.path() / "report.html";
  const CliRun r = run("report " + input + " -o " + html.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Rendered out;
  const testing::BrowserRun dom = testing::run_chromium(chromium, "--dump-dom", html);
  EXPECT_EQ(dom.exit_code, 0);
  // (No std::regex: GCC 12 warns inside it in sanitizer builds.)
  const std::string key = "data-render-ms=\"";
  if (const size_t at = dom.out.find(key); at != std::string::npos) {
    const size_t begin = at + key.size();
    const size_t end = dom.out.find('"', begin);
    if (end != std::string::npos) out.render_ms = std::stod(dom.out.substr(begin, end - begin));
  }

  const auto png = dir.path() / "shot.png";
  const testing::BrowserRun shot = testing::run_chromium(
      chromium, "--screenshot=" + png.string() + " --window-size=1400,1000", html);
  EXPECT_EQ(shot.exit_code, 0);
  const auto image = testing::decode_png(testing::read_file(png));
  EXPECT_TRUE(image.has_value()) << "no readable screenshot at " << png;
  if (image) {
    EXPECT_EQ(image->width, 1400u);
    out.coverage = testing::coverage(*image);
  }
  return out;
}

// A blank page is one colour and has no coloured pixel; so has the page's skeleton when its
// script fails (grey text, white boxes). Drawn bands and buffers are blue, orange, yellow: even
// densenet121, whose grey weights fill most of the chart, has about 2% of its pixels coloured.
void expect_drawn(const Rendered& r) {
  EXPECT_GE(r.render_ms, 0) << "the page's script did not finish (a JavaScript error?)";
  EXPECT_GT(r.coverage.colours, 100u);
  EXPECT_GT(r.coverage.coloured_fraction, 0.005);
}

TEST(BrowserRender, SharedModelReportIsDrawn) {
  FOOTPRINT_REQUIRE_SHARED();
  FOOTPRINT_REQUIRE_CHROMIUM(chromium);
  const auto model = testing::shared_dir() / "models/light/densenet121/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " not found";
  const Rendered r = render(chromium, model.string());
  expect_drawn(r);
  std::printf("densenet121: rendered in %.0f ms, %zu colours, %.1f%% of pixels coloured\n",
              r.render_ms, r.coverage.colours, r.coverage.coloured_fraction * 100);
}

TEST(BrowserRender, SeedTraceReportIsDrawn) {
  FOOTPRINT_REQUIRE_CHROMIUM(chromium);
  expect_drawn(
      render(chromium, std::string(FOOTPRINT_SOURCE_DIR) + "/examples/traces/seed_mul_list.json"));
}

}  // namespace
}  // namespace footprint
