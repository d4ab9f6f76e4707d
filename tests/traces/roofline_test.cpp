#include "traces/roofline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/traces/trace_test_util.h"
#include "tests/traces/xml_reader.h"

namespace mtlemu::traces {
namespace {

using testing::HavePython;
using testing::RunPython;
using testing::TempPath;
using testing::WriteFile;
using testing::XmlElement;
using testing::XmlReader;

// Apple M1 as the tests' chip: 2.6 TFLOP/s, 68 GB/s.
RooflinePanel M1(std::vector<RooflinePoint> points = {}) {
  return {.chip = "Apple M1",
          .peak_flops_per_s = 2.6e12,
          .peak_dram_bytes_per_s = 68e9,
          .points = std::move(points)};
}

XmlElement Svg(const std::vector<RooflinePanel>& panels) {
  const std::string text = RooflineSvg(panels);
  std::string error;
  std::optional<XmlElement> root = XmlReader::Parse(text, &error);
  if (!root) {
    ADD_FAILURE() << "not well-formed XML: " << error << "\n" << text;
    return XmlElement{};
  }
  EXPECT_EQ(root->name, "svg");
  EXPECT_EQ(root->Attribute("xmlns"), "http://www.w3.org/2000/svg");
  return *root;
}

double Number(const XmlElement& e, std::string_view attribute) {
  const std::optional<std::string> value = e.Attribute(attribute);
  if (!value) {
    ADD_FAILURE() << "<" << e.name << "> has no " << attribute;
    return NAN;
  }
  const double number = std::stod(*value);
  EXPECT_TRUE(std::isfinite(number)) << attribute << "=" << *value;
  return number;
}

// One panel of the picture and the pixel positions of its axes.
class Panel {
 public:
  explicit Panel(const XmlElement& g) : g_(g) {
    for (const XmlElement* tick : g.FindByClass("xtick")) {
      x_ticks_[Number(*tick, "data-value")] = Number(*tick, "x1");
    }
    for (const XmlElement* tick : g.FindByClass("ytick")) {
      y_ticks_[Number(*tick, "data-value")] = Number(*tick, "y1");
    }
    const std::vector<const XmlElement*> plot = g.FindByClass("plot");
    if (plot.size() == 1) {
      left_ = Number(*plot[0], "x");
      top_ = Number(*plot[0], "y");
      right_ = left_ + Number(*plot[0], "width");
      bottom_ = top_ + Number(*plot[0], "height");
    } else {
      ADD_FAILURE() << "no plot area";
    }
  }

  const XmlElement& g() const { return g_; }
  std::vector<double> XTicks() const { return Keys(x_ticks_); }
  std::vector<double> YTicks() const { return Keys(y_ticks_); }
  double left() const { return left_; }
  double right() const { return right_; }
  double top() const { return top_; }
  double bottom() const { return bottom_; }

  // Where the axes put a value, from the first and last decade ticks.
  double X(double intensity) const { return Interpolate(x_ticks_, intensity); }
  double Y(double gflops) const { return Interpolate(y_ticks_, gflops); }

  std::string Title() const {
    const std::vector<const XmlElement*> t = g_.FindByClass("title");
    return t.size() == 1 ? t[0]->AllText() : "";
  }
  std::vector<std::string> Notes() const {
    std::vector<std::string> notes;
    for (const XmlElement* e : g_.FindByClass("note")) {
      notes.push_back(e->AllText());
    }
    return notes;
  }

 private:
  static std::vector<double> Keys(const std::map<double, double>& ticks) {
    std::vector<double> keys;
    for (const auto& [k, v] : ticks) keys.push_back(k);
    return keys;
  }
  static double Interpolate(const std::map<double, double>& ticks, double v) {
    if (ticks.size() < 2) {
      ADD_FAILURE() << "fewer than two ticks";
      return NAN;
    }
    const auto [v1, p1] = *ticks.begin();
    const auto [v2, p2] = *ticks.rbegin();
    return p1 + (std::log10(v) - std::log10(v1)) /
                    (std::log10(v2) - std::log10(v1)) * (p2 - p1);
  }

  const XmlElement& g_;
  std::map<double, double> x_ticks_, y_ticks_;  // value -> pixel
  double left_ = 0, right_ = 0, top_ = 0, bottom_ = 0;
};

std::vector<const XmlElement*> PanelGroups(const XmlElement& svg) {
  return svg.FindByClass("panel");
}

struct Point {
  double x, y;
};
std::vector<Point> PolylinePoints(const XmlElement& polyline) {
  std::vector<Point> points;
  std::istringstream in(*polyline.Attribute("points"));
  std::string pair;
  while (in >> pair) {
    const size_t comma = pair.find(',');
    points.push_back(
        {std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1))});
  }
  return points;
}

// A drawn kernel: its circle, its label (name and GFLOP/s), the note on
// the label's second line and the circle's tooltip.
struct DrawnPoint {
  const XmlElement* circle = nullptr;
  std::string label;
  std::string note;
  std::string tooltip;
};
std::vector<DrawnPoint> DrawnPoints(const Panel& panel) {
  std::vector<DrawnPoint> points;
  for (const XmlElement* g : panel.g().FindByClass("point")) {
    DrawnPoint p;
    for (const XmlElement& child : g->children) {
      if (child.name == "circle") {
        p.circle = &child;
        for (const XmlElement& title : child.children) {
          if (title.name == "title") p.tooltip = title.AllText();
        }
      }
      if (child.name == "text" && !child.children.empty()) {
        p.label = child.children[0].AllText();
        if (child.children.size() > 1) p.note = child.children[1].AllText();
      }
    }
    EXPECT_NE(p.circle, nullptr);
    points.push_back(p);
  }
  return points;
}

constexpr double kPixel = 0.02;  // coordinates are written to 0.01 px

TEST(Roofline, OnePanelPerChipSideBySide) {
  RooflinePanel m2 = M1();
  m2.chip = "Apple M2";
  RooflinePanel m3 = M1();
  m3.chip = "Apple M3";
  const XmlElement svg = Svg({M1(), m2, m3});
  EXPECT_EQ(Number(svg, "width"), 3 * 420);
  const std::vector<const XmlElement*> groups = PanelGroups(svg);
  ASSERT_EQ(groups.size(), 3u);
  const char* chips[] = {"Apple M1", "Apple M2", "Apple M3"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(Panel(*groups[i]).Title(), chips[i]);
    EXPECT_EQ(groups[i]->Attribute("transform"),
              "translate(" + std::to_string(420 * i) + ".00,0)");
  }
}

TEST(Roofline, RidgeIsAtPeakOverBandwidth) {
  const XmlElement svg = Svg({M1()});
  const Panel panel(*PanelGroups(svg).at(0));
  const std::vector<const XmlElement*> ridge = panel.g().FindByClass("ridge");
  ASSERT_EQ(ridge.size(), 1u);
  const double intensity = 2.6e12 / 68e9;  // 38.2 FLOP/byte
  EXPECT_DOUBLE_EQ(Number(*ridge[0], "data-intensity"), intensity);
  EXPECT_DOUBLE_EQ(Number(*ridge[0], "data-gflops"), 2600);
  EXPECT_DOUBLE_EQ(Number(*ridge[0], "data-gbs"), 68);
  // Drawn where the axes put (38.2 FLOP/byte, 2600 GFLOP/s).
  const double cx = Number(*ridge[0], "cx"), cy = Number(*ridge[0], "cy");
  EXPECT_NEAR(cx, panel.X(intensity), kPixel);
  EXPECT_NEAR(cy, panel.Y(2600), kPixel);
  const std::vector<const XmlElement*> label =
      panel.g().FindByClass("ridge-label");
  ASSERT_EQ(label.size(), 1u);
  const std::string text = label[0]->AllText();
  EXPECT_NE(text.find("2600 GFLOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("68 GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("38.2 FLOP/byte"), std::string::npos) << text;

  // The roof: up the bandwidth slope to the ridge, then flat at the peak.
  const std::vector<const XmlElement*> roof = panel.g().FindByClass("roof");
  ASSERT_EQ(roof.size(), 1u);
  const std::vector<Point> v = PolylinePoints(*roof[0]);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0].x, panel.left(), kPixel);
  EXPECT_NEAR(v[0].y, panel.Y(68.0 / 16), kPixel);  // 1/16 FLOP/byte
  EXPECT_NEAR(v[1].x, cx, kPixel);
  EXPECT_NEAR(v[1].y, cy, kPixel);
  EXPECT_NEAR(v[2].x, panel.right(), kPixel);
  EXPECT_NEAR(v[2].y, cy, kPixel);
}

TEST(Roofline, AxesSpanTheDocumentedRanges) {
  const XmlElement svg = Svg({M1()});
  const Panel panel(*PanelGroups(svg).at(0));
  // Intensity 1/16 to 256, decade ticks inside.
  EXPECT_EQ(panel.XTicks(), (std::vector<double>{0.1, 1, 10, 100}));
  EXPECT_NEAR(panel.X(1.0 / 16), panel.left(), kPixel);
  EXPECT_NEAR(panel.X(256), panel.right(), kPixel);
  // A decade below the lowest roof (4.25 GFLOP/s at 1/16 FLOP/byte) to a
  // decade above the peak (2600 GFLOP/s).
  EXPECT_EQ(panel.YTicks(), (std::vector<double>{1, 10, 100, 1000, 10000}));
  EXPECT_NEAR(panel.Y(0.425), panel.bottom(), kPixel);
  EXPECT_NEAR(panel.Y(26000), panel.top(), kPixel);
}

TEST(Roofline, AxesWidenToHoldEveryPointAndTheRidge) {
  RooflinePanel panel_data = M1({
      {.label = "dense", .flops = 1e12, .dram_bytes = 1e9, .seconds = 1},
      {.label = "sparse", .flops = 1e6, .dram_bytes = 1e9, .seconds = 1e-3},
  });
  const XmlElement svg = Svg({panel_data});
  const Panel panel(*PanelGroups(svg).at(0));
  // 1000 and 0.001 FLOP/byte, with a factor of two to spare.
  EXPECT_EQ(panel.XTicks().front(), 0.001);
  EXPECT_EQ(panel.XTicks().back(), 1000);
  EXPECT_NEAR(panel.X(0.0005), panel.left(), kPixel);
  EXPECT_NEAR(panel.X(2000), panel.right(), kPixel);
  // The roof at 0.0005 FLOP/byte (0.034 GFLOP/s) is now the lowest value.
  EXPECT_NEAR(panel.Y(0.0034), panel.bottom(), kPixel);

  RooflinePanel lopsided = M1();
  lopsided.peak_flops_per_s = 1e14;  // ridge at 1470 FLOP/byte
  const XmlElement svg2 = Svg({lopsided});
  const Panel panel2(*PanelGroups(svg2).at(0));
  const XmlElement& ridge = *panel2.g().FindByClass("ridge").at(0);
  EXPECT_LT(Number(ridge, "cx"), panel2.right());
  EXPECT_NEAR(Number(ridge, "cx"), panel2.X(1e14 / 68e9), kPixel);
}

TEST(Roofline, PointsSitAtIntensityAndPerformance) {
  const XmlElement svg = Svg({M1(
      {{.label = "saxpy", .flops = 2e9, .dram_bytes = 12e9, .seconds = 0.2}})});
  const Panel panel(*PanelGroups(svg).at(0));
  const std::vector<DrawnPoint> points = DrawnPoints(panel);
  ASSERT_EQ(points.size(), 1u);
  const XmlElement& c = *points[0].circle;
  // 2 GFLOP over 12 GB in 0.2 s: 1/6 FLOP/byte at 10 GFLOP/s.
  EXPECT_NEAR(Number(c, "cx"), panel.X(1.0 / 6), kPixel);
  EXPECT_NEAR(Number(c, "cy"), panel.Y(10), kPixel);
  EXPECT_DOUBLE_EQ(Number(c, "data-gflops"), 10);
  EXPECT_EQ(points[0].label, "saxpy: 10 GFLOP/s");
  EXPECT_EQ(points[0].note, "");
  EXPECT_EQ(points[0].tooltip, "saxpy: 10 GFLOP/s, 0.167 FLOP/byte");
  EXPECT_NE(c.Attribute("fill"), "white");
}

TEST(Roofline, PointsWithoutBytesFlopsOrTimeGoToTheEdge) {
  const XmlElement svg = Svg({M1({
      {.label = "no_bytes", .flops = 1e9, .dram_bytes = 0, .seconds = 1e-3},
      {.label = "no_flops", .flops = 0, .dram_bytes = 1e9, .seconds = 1e-3},
      {.label = "no_time", .flops = 1e9, .dram_bytes = 1e9, .seconds = 0},
      {.label = "nothing", .flops = 0, .dram_bytes = 0, .seconds = 0},
  })});
  const Panel panel(*PanelGroups(svg).at(0));
  const std::vector<DrawnPoint> points = DrawnPoints(panel);
  ASSERT_EQ(points.size(), 4u);
  const auto at = [&](size_t i) {
    return std::pair(Number(*points[i].circle, "cx"),
                     Number(*points[i].circle, "cy"));
  };
  // No DRAM bytes: infinite intensity, at the right edge, still at its
  // 1000 GFLOP/s.
  EXPECT_NEAR(at(0).first, panel.right(), kPixel);
  EXPECT_NEAR(at(0).second, panel.Y(1000), kPixel);
  EXPECT_EQ(points[0].label, "no_bytes: 1000 GFLOP/s");
  EXPECT_EQ(points[0].note, "(no DRAM bytes: drawn at the right edge)");
  EXPECT_EQ(points[0].tooltip,
            "no_bytes: 1000 GFLOP/s (no DRAM bytes: drawn at the right edge)");
  // No FLOPs: nothing to put on a log axis, the lower-left corner.
  EXPECT_NEAR(at(1).first, panel.left(), kPixel);
  EXPECT_NEAR(at(1).second, panel.bottom(), kPixel);
  EXPECT_EQ(points[1].label, "no_flops");
  EXPECT_EQ(points[1].note, "(no FLOPs: drawn at the lower-left corner)");
  // No time: infinitely fast, at the top edge, at its 1 FLOP/byte.
  EXPECT_NEAR(at(2).first, panel.X(1), kPixel);
  EXPECT_NEAR(at(2).second, panel.top(), kPixel);
  EXPECT_EQ(points[2].label, "no_time");
  EXPECT_EQ(points[2].note, "(no time: drawn at the top edge)");
  EXPECT_NEAR(at(3).first, panel.left(), kPixel);
  EXPECT_NEAR(at(3).second, panel.bottom(), kPixel);
  // Drawn hollow.
  for (const DrawnPoint& p : points) {
    EXPECT_EQ(p.circle->Attribute("fill"), "white") << p.label;
  }
}

TEST(Roofline, PanelWithoutPointsSaysSo) {
  const XmlElement svg = Svg({M1()});
  const Panel panel(*PanelGroups(svg).at(0));
  EXPECT_TRUE(DrawnPoints(panel).empty());
  EXPECT_EQ(panel.Notes(), (std::vector<std::string>{"no kernels"}));
  EXPECT_EQ(panel.g().FindByClass("roof").size(), 1u);
}

TEST(Roofline, PanelWithoutPeakOrBandwidthHasNoRoof) {
  RooflinePanel no_roof =
      M1({{.label = "k", .flops = 1e9, .dram_bytes = 1e8, .seconds = 1e-2}});
  no_roof.peak_dram_bytes_per_s = 0;
  const XmlElement svg = Svg({no_roof});
  const Panel panel(*PanelGroups(svg).at(0));
  EXPECT_TRUE(panel.g().FindByClass("roof").empty());
  EXPECT_TRUE(panel.g().FindByClass("ridge").empty());
  ASSERT_EQ(panel.Notes().size(), 1u);
  EXPECT_EQ(panel.Notes()[0].rfind("no roof", 0), 0u) << panel.Notes()[0];
  // The point is still drawn: 10 FLOP/byte at 100 GFLOP/s.
  const std::vector<DrawnPoint> points = DrawnPoints(panel);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_NEAR(Number(*points[0].circle, "cx"), panel.X(10), kPixel);
  EXPECT_NEAR(Number(*points[0].circle, "cy"), panel.Y(100), kPixel);
}

TEST(Roofline, NoPanelsIsStillAPicture) {
  const XmlElement svg = Svg({});
  EXPECT_TRUE(PanelGroups(svg).empty());
  EXPECT_NE(svg.AllText().find("no chips"), std::string::npos);
}

TEST(Roofline, EscapesTextForXml) {
  RooflinePanel odd = M1(
      {{.label = "k<1>&'q'\"", .flops = 1e9, .dram_bytes = 1e9, .seconds = 1}});
  odd.chip = "A&B <\"x\"> \x01";
  const XmlElement svg = Svg({odd});
  const Panel panel(*PanelGroups(svg).at(0));
  EXPECT_EQ(panel.Title(), "A&B <\"x\"> \xEF\xBF\xBD");
  EXPECT_EQ(DrawnPoints(panel).at(0).label, "k<1>&'q'\": 1 GFLOP/s");
}

TEST(Roofline, PythonsXmlParserReadsIt) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  RooflinePanel m2 = M1({{.label = "a&b", .flops = 1, .dram_bytes = 0}});
  m2.chip = "Apple M2 <max>";
  const std::string path = TempPath("roofline.svg");
  WriteFile(path, RooflineSvg({M1(), m2}));
  const char* script = R"(
import sys, xml.etree.ElementTree as ET
ns = {'svg': 'http://www.w3.org/2000/svg'}
root = ET.parse(sys.argv[1]).getroot()
panels = root.findall('svg:g[@class="panel"]', ns)
assert len(panels) == 2, panels
titles = [p.find('svg:text[@class="title"]', ns).text for p in panels]
assert titles == ['Apple M1', 'Apple M2 <max>'], titles
)";
  EXPECT_EQ(RunPython(script, path), 0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mtlemu::traces
