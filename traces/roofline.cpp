#include "traces/roofline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/escape.h"

namespace mtlemu::traces {
namespace {

// One panel's size in pixels and its plot area inside it.
constexpr double kPanelWidth = 420;
constexpr double kPanelHeight = 360;
constexpr double kPlotLeft = 62;
constexpr double kPlotRight = 406;
constexpr double kPlotTop = 42;
constexpr double kPlotBottom = 308;
constexpr double kLineHeight = 12;  // of a label's second line

// The intensity axis always shows at least this, the range where kernels
// and the ridges of Apple's GPUs usually lie.
constexpr double kMinIntensity = 1.0 / 16;
constexpr double kMaxIntensity = 256;

// A white outline under text keeps labels readable over lines.
constexpr const char* kHalo =
    " stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\" "
    "paint-order=\"stroke\"";

constexpr std::string_view kPointColors[] = {"#d62728", "#2ca02c", "#9467bd",
                                             "#ff7f0e", "#17becf", "#8c564b"};

bool Positive(double v) { return std::isfinite(v) && v > 0; }

std::string Fixed(double value, int precision) {
  char text[64];
  const std::to_chars_result r = std::to_chars(
      text, text + sizeof(text), value, std::chars_format::fixed, precision);
  if (r.ec != std::errc()) return "0";
  return std::string(text, r.ptr);
}

// A value for a data-* attribute: the shortest text that reads back as the
// same double.
std::string Exact(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return "nan";
  char text[32];
  const std::to_chars_result r =
      std::to_chars(text, text + sizeof(text), value);
  return std::string(text, r.ptr);
}

// A pixel coordinate.
std::string Px(double value) {
  return Fixed(std::isfinite(value) ? value : 0, 2);
}

// A quantity for people: three significant digits, no exponent from 0.001 to
// ten million ("2600", "68", "38.2", "0.0625").
std::string Human(double value) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : "?";
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude < 1e-3 || magnitude >= 1e7) {
    char text[64];
    const std::to_chars_result r = std::to_chars(
        text, text + sizeof(text), value, std::chars_format::scientific, 2);
    return std::string(text, r.ptr);
  }
  const int integer_digits =
      static_cast<int>(std::floor(std::log10(magnitude))) + 1;
  std::string text = Fixed(value, std::max(0, 3 - integer_digits));
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

// The label of the decade tick 10^exponent.
std::string DecadeLabel(int exponent) {
  if (exponent < -3 || exponent > 6) return "1e" + std::to_string(exponent);
  return Fixed(std::pow(10.0, exponent), std::max(0, -exponent));
}

std::string Escaped(std::string_view text) {
  std::string out;
  AppendXmlEscaped(text, out);
  return out;
}

// A log10 axis from `lo` to `hi` onto pixels `pixel_lo` to `pixel_hi`;
// values beyond the range are drawn at its edge. The range is kept within
// what a double holds, so extreme inputs cannot make coordinates NaN.
class LogAxis {
 public:
  LogAxis(double lo, double hi, double pixel_lo, double pixel_hi)
      : lo_(std::clamp(lo, 1e-300, 1e290)),
        hi_(std::clamp(hi, lo_ * 10, 1e300)),
        log_lo_(std::log10(lo_)),
        log_hi_(std::log10(hi_)),
        pixel_lo_(pixel_lo),
        pixel_hi_(pixel_hi) {}

  double lo() const { return lo_; }
  double hi() const { return hi_; }

  double Pixel(double value) const {
    double t = 0;
    if (value >= hi_ || std::isnan(value)) {
      t = std::isnan(value) ? 0 : 1;
    } else if (value > lo_) {
      t = (std::log10(value) - log_lo_) / (log_hi_ - log_lo_);
    }
    return pixel_lo_ + t * (pixel_hi_ - pixel_lo_);
  }

  // The exponents of the decades 10^k inside the range.
  int FirstDecade() const {
    return static_cast<int>(std::ceil(log_lo_ - 1e-9));
  }
  int LastDecade() const {
    return static_cast<int>(std::floor(log_hi_ + 1e-9));
  }

 private:
  double lo_, hi_, log_lo_, log_hi_, pixel_lo_, pixel_hi_;
};

// A kernel where it is drawn: values at the axis edge when they have no
// place on a log axis, with a note saying so.
struct PlacedPoint {
  double intensity = 0;  // FLOP/byte; 0 = left edge, inf = right edge
  double gflops = 0;     // GFLOP/s; 0 = bottom edge, inf = top edge
  std::string label;     // name and GFLOP/s
  std::string note;      // why the point is on an edge, or empty
  std::string tooltip;
};

PlacedPoint Place(const RooflinePoint& point) {
  PlacedPoint placed;
  const bool has_flops = Positive(point.flops);
  const bool has_bytes = Positive(point.dram_bytes);
  const bool has_time = Positive(point.seconds);
  std::string note;
  if (!has_flops) {
    note = point.flops == 0 ? "no FLOPs: drawn at the lower-left corner"
                            : "invalid FLOPs: drawn at the lower-left corner";
  } else {
    placed.intensity = has_bytes ? point.flops / point.dram_bytes
                                 : std::numeric_limits<double>::infinity();
    placed.gflops = has_time ? point.flops / point.seconds / 1e9
                             : std::numeric_limits<double>::infinity();
    if (!has_bytes) note = "no DRAM bytes: drawn at the right edge";
    if (!has_time) {
      if (!note.empty()) note += "; ";
      note += "no time: drawn at the top edge";
    }
    // Finite inputs can still overflow (huge FLOPs over tiny bytes).
    if (note.empty() &&
        !(Positive(placed.intensity) && Positive(placed.gflops))) {
      note = "off scale: drawn at the edge";
    }
  }
  placed.label = point.label;
  if (has_flops && has_time) {
    placed.label += ": " + Human(placed.gflops) + " GFLOP/s";
  }
  placed.tooltip = placed.label;
  if (!note.empty()) {
    placed.note = "(" + note + ")";
    placed.tooltip += " " + placed.note;
  }
  if (has_flops && has_bytes) {
    placed.tooltip += ", " + Human(placed.intensity) + " FLOP/byte";
  }
  return placed;
}

class PanelDrawer {
 public:
  PanelDrawer(const RooflinePanel& panel, std::string& out)
      : panel_(panel), out_(out) {}

  void Draw(double offset_x) {
    peak_gflops_ = panel_.peak_flops_per_s / 1e9;
    bandwidth_gbs_ = panel_.peak_dram_bytes_per_s / 1e9;
    has_roof_ =
        Positive(peak_gflops_) && Positive(bandwidth_gbs_) &&
        Positive(panel_.peak_flops_per_s / panel_.peak_dram_bytes_per_s);
    ridge_ =
        has_roof_ ? panel_.peak_flops_per_s / panel_.peak_dram_bytes_per_s : 0;
    for (const RooflinePoint& point : panel_.points) {
      points_.push_back(Place(point));
    }
    ChooseRanges();

    out_ +=
        "<g class=\"panel\" transform=\"translate(" + Px(offset_x) + ",0)\">\n";
    out_ += "<text class=\"title\" x=\"" + Px(kPanelWidth / 2) +
            "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
            "font-weight=\"bold\">" +
            Escaped(panel_.chip) + "</text>\n";
    DrawAxes();
    if (has_roof_) {
      DrawRoof();
    } else {
      Note("no roof: peak FLOP/s or DRAM bandwidth not given",
           (kPlotTop + kPlotBottom) / 2);
    }
    if (points_.empty()) {
      Note("no kernels", kPlotBottom - 12);
    }
    DrawPoints();
    out_ += "</g>\n";
  }

 private:
  // Intensity from 1/16 to 256 FLOP/byte, widened to hold the ridge and
  // every point; performance from a decade below the lowest point or roof
  // to a decade above the peak.
  void ChooseRanges() {
    double x_lo = kMinIntensity, x_hi = kMaxIntensity;
    const auto widen_x = [&](double v) {
      if (!Positive(v)) return;
      x_lo = std::min(x_lo, v / 2);
      x_hi = std::max(x_hi, v * 2);
    };
    if (has_roof_) widen_x(ridge_);
    for (const PlacedPoint& p : points_) widen_x(p.intensity);
    x_ = LogAxis(x_lo, x_hi, kPlotLeft, kPlotRight);

    double y_lo = std::numeric_limits<double>::infinity();
    double y_hi = 0;
    const auto widen_y = [&](double v) {
      if (!Positive(v)) return;
      y_lo = std::min(y_lo, v);
      y_hi = std::max(y_hi, v);
    };
    if (has_roof_) {
      widen_y(Roof(x_lo));
      widen_y(peak_gflops_);
    }
    for (const PlacedPoint& p : points_) widen_y(p.gflops);
    if (y_hi == 0) {  // nothing to show: one to a thousand GFLOP/s
      y_lo = 10;
      y_hi = 100;
    }
    y_ = LogAxis(y_lo / 10, y_hi * 10, kPlotBottom, kPlotTop);
  }

  double Roof(double intensity) const {
    return std::min(peak_gflops_, intensity * bandwidth_gbs_);
  }

  void DrawAxes() {
    out_ += "<rect class=\"plot\" x=\"" + Px(kPlotLeft) + "\" y=\"" +
            Px(kPlotTop) + "\" width=\"" + Px(kPlotRight - kPlotLeft) +
            "\" height=\"" + Px(kPlotBottom - kPlotTop) +
            "\" fill=\"none\" stroke=\"#444\"/>\n";
    for (int k = x_.FirstDecade(); k <= x_.LastDecade(); ++k) {
      const std::string x = Px(x_.Pixel(std::pow(10.0, k)));
      out_ += "<line class=\"grid\" x1=\"" + x + "\" y1=\"" + Px(kPlotTop) +
              "\" x2=\"" + x + "\" y2=\"" + Px(kPlotBottom) +
              "\" stroke=\"#e3e3e3\"/>\n";
      out_ += "<line class=\"xtick\" data-value=\"" + DecadeLabel(k) +
              "\" x1=\"" + x + "\" y1=\"" + Px(kPlotBottom) + "\" x2=\"" + x +
              "\" y2=\"" + Px(kPlotBottom + 5) + "\" stroke=\"#444\"/>\n";
      out_ += "<text x=\"" + x + "\" y=\"" + Px(kPlotBottom + 18) +
              "\" text-anchor=\"middle\">" + DecadeLabel(k) + "</text>\n";
    }
    for (int k = y_.FirstDecade(); k <= y_.LastDecade(); ++k) {
      const std::string y = Px(y_.Pixel(std::pow(10.0, k)));
      out_ += "<line class=\"grid\" x1=\"" + Px(kPlotLeft) + "\" y1=\"" + y +
              "\" x2=\"" + Px(kPlotRight) + "\" y2=\"" + y +
              "\" stroke=\"#e3e3e3\"/>\n";
      out_ += "<line class=\"ytick\" data-value=\"" + DecadeLabel(k) +
              "\" x1=\"" + Px(kPlotLeft - 5) + "\" y1=\"" + y + "\" x2=\"" +
              Px(kPlotLeft) + "\" y2=\"" + y + "\" stroke=\"#444\"/>\n";
      out_ += "<text x=\"" + Px(kPlotLeft - 8) + "\" y=\"" + y +
              "\" dy=\"0.35em\" text-anchor=\"end\">" + DecadeLabel(k) +
              "</text>\n";
    }
    out_ += "<text x=\"" + Px((kPlotLeft + kPlotRight) / 2) + "\" y=\"" +
            Px(kPlotBottom + 38) +
            "\" text-anchor=\"middle\">arithmetic intensity "
            "(FLOP/byte)</text>\n";
    const std::string y_mid = Px((kPlotTop + kPlotBottom) / 2);
    out_ += "<text x=\"16\" y=\"" + y_mid + "\" transform=\"rotate(-90 16 " +
            y_mid + ")\" text-anchor=\"middle\">performance (GFLOP/s)</text>\n";
  }

  void DrawRoof() {
    const double x_lo = x_.lo(), x_hi = x_.hi();
    out_ +=
        "<polyline class=\"roof\" fill=\"none\" stroke=\"#1f4e9c\" "
        "stroke-width=\"2\" points=\"";
    const auto vertex = [&](double intensity) {
      out_ +=
          Px(x_.Pixel(intensity)) + "," + Px(y_.Pixel(Roof(intensity))) + " ";
    };
    vertex(x_lo);
    vertex(ridge_);  // inside the range: ChooseRanges made room
    vertex(x_hi);
    out_.back() = '"';
    out_ += "/>\n";

    const double rx = x_.Pixel(ridge_), ry = y_.Pixel(peak_gflops_);
    out_ += "<line class=\"ridge-line\" x1=\"" + Px(rx) + "\" y1=\"" + Px(ry) +
            "\" x2=\"" + Px(rx) + "\" y2=\"" + Px(kPlotBottom) +
            "\" stroke=\"#1f4e9c\" stroke-dasharray=\"3,3\"/>\n";
    const std::string text = "ridge " + Human(ridge_) +
                             " FLOP/byte: " + Human(peak_gflops_) +
                             " GFLOP/s, " + Human(bandwidth_gbs_) + " GB/s";
    out_ += "<circle class=\"ridge\" data-intensity=\"" + Exact(ridge_) +
            "\" data-gflops=\"" + Exact(peak_gflops_) + "\" data-gbs=\"" +
            Exact(bandwidth_gbs_) + "\" cx=\"" + Px(rx) + "\" cy=\"" + Px(ry) +
            "\" r=\"4\" fill=\"#1f4e9c\"><title>" + Escaped(text) +
            "</title></circle>\n";
    // Above the roof, kept inside the plot.
    const char* anchor = "middle";
    if (rx < kPlotLeft + 110) anchor = "start";
    if (rx > kPlotRight - 110) anchor = "end";
    const double tx = std::clamp(rx, kPlotLeft + 4, kPlotRight - 4);
    out_ += "<text class=\"ridge-label\" x=\"" + Px(tx) + "\" y=\"" +
            Px(ry - 22) + "\" text-anchor=\"" + anchor + "\" fill=\"#1f4e9c\"" +
            kHalo + "><tspan x=\"" + Px(tx) + "\">peak " + Human(peak_gflops_) +
            " GFLOP/s, " + Human(bandwidth_gbs_) + " GB/s</tspan><tspan x=\"" +
            Px(tx) + "\" dy=\"13\">ridge " + Human(ridge_) +
            " FLOP/byte</tspan></text>\n";
  }

  void DrawPoints() {
    struct Spot {
      double x, top, bottom;
    };
    std::vector<Spot> taken_spots;  // labels drawn so far
    for (size_t i = 0; i < points_.size(); ++i) {
      const PlacedPoint& p = points_[i];
      const double cx = x_.Pixel(p.intensity), cy = y_.Pixel(p.gflops);
      const std::string_view color = kPointColors[i % std::size(kPointColors)];
      out_ += "<g class=\"point\"><circle data-intensity=\"" +
              Exact(p.intensity) + "\" data-gflops=\"" + Exact(p.gflops) +
              "\" cx=\"" + Px(cx) + "\" cy=\"" + Px(cy) +
              "\" r=\"4.5\" stroke=\"" + std::string(color) + "\"";
      // Points pushed to an edge are hollow.
      out_ += !p.note.empty() ? " fill=\"white\" stroke-width=\"2\""
                              : " fill=\"" + std::string(color) + "\"";
      out_ += "><title>" + Escaped(p.tooltip) + "</title></circle>";
      // Right of the point, or left of it near the right edge, with the
      // note on a second line; moved down while another label is in the way.
      const bool left = cx > kPlotRight - 150;
      const double lx = left ? cx - 8 : cx + 8;
      const double height = p.note.empty() ? 0 : kLineHeight;
      double ly = std::clamp(cy + 4, kPlotTop + 12, kPlotBottom - 4 - height);
      for (int tries = 0; tries < 8; ++tries) {
        const bool taken = std::any_of(
            taken_spots.begin(), taken_spots.end(), [&](const Spot& spot) {
              return std::fabs(spot.x - lx) < 60 &&
                     ly + height > spot.top - kLineHeight + 1 &&
                     ly < spot.bottom + kLineHeight - 1;
            });
        if (!taken) break;
        ly += kLineHeight;
      }
      taken_spots.push_back({lx, ly, ly + height});
      out_ += "<text x=\"" + Px(lx) + "\" y=\"" + Px(ly) + "\" text-anchor=\"" +
              (left ? "end" : "start") + "\" fill=\"" + std::string(color) +
              "\"" + kHalo + "><tspan>" + Escaped(p.label) + "</tspan>";
      if (!p.note.empty()) {
        out_ += "<tspan class=\"edge-note\" x=\"" + Px(lx) + "\" dy=\"" +
                Px(kLineHeight) + "\" font-size=\"10\">" + Escaped(p.note) +
                "</tspan>";
      }
      out_ += "</text></g>\n";
    }
  }

  void Note(std::string_view text, double y) {
    out_ += "<text class=\"note\" x=\"" + Px((kPlotLeft + kPlotRight) / 2) +
            "\" y=\"" + Px(y) +
            "\" text-anchor=\"middle\" font-style=\"italic\" fill=\"#777\">" +
            Escaped(text) + "</text>\n";
  }

  const RooflinePanel& panel_;
  std::string& out_;
  double peak_gflops_ = 0, bandwidth_gbs_ = 0, ridge_ = 0;
  bool has_roof_ = false;
  std::vector<PlacedPoint> points_;
  LogAxis x_{1, 10, 0, 1};
  LogAxis y_{1, 10, 0, 1};
};

}  // namespace

std::string RooflineSvg(const std::vector<RooflinePanel>& panels) {
  const double width = kPanelWidth * std::max<size_t>(panels.size(), 1);
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Px(width) +
         "\" height=\"" + Px(kPanelHeight) + "\" viewBox=\"0 0 " + Px(width) +
         " " + Px(kPanelHeight) +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n";
  std::string title = "Roofline";
  for (size_t i = 0; i < panels.size(); ++i) {
    title += (i == 0 ? ": " : ", ") + panels[i].chip;
  }
  out += "<title>" + Escaped(title) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (panels.empty()) {
    out += "<text x=\"" + Px(kPanelWidth / 2) + "\" y=\"" +
           Px(kPanelHeight / 2) +
           "\" text-anchor=\"middle\" fill=\"#777\">no chips</text>\n";
  }
  for (size_t i = 0; i < panels.size(); ++i) {
    PanelDrawer(panels[i], out).Draw(kPanelWidth * static_cast<double>(i));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace mtlemu::traces
