#include "compiler/triton/lower/print_log.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "isa/numeric.h"

namespace mtlemu::triton::lower {
namespace {

struct Record {
  uint32_t site, operand, x, y, z, seq, index;
  uint64_t bits;

  auto Key() const { return std::tie(z, y, x, seq, site, operand, index); }
};

int Digits(int64_t v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    ++d;
  }
  return d;
}

// "( 3, 0)": each coordinate as wide as its dimension's largest index.
std::string IndexText(const std::vector<int64_t>& shape, uint32_t flat) {
  std::vector<int64_t> coords(shape.size());
  uint64_t rest = flat;
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = static_cast<int64_t>(rest % static_cast<uint64_t>(shape[d]));
    rest /= static_cast<uint64_t>(shape[d]);
  }
  std::string out = "(";
  for (size_t d = 0; d < shape.size(); ++d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%*lld", Digits(shape[d] - 1),
                  static_cast<long long>(coords[d]));
    out += (d ? ", " : "") + std::string(buf);
  }
  return out + ")";
}

// The value as Triton's printf formats it: %f for floats, %d/%u (%lld,
// %llu) for integers; with hex, 0x and two digits a byte of a value
// promoted to 32 bits (a negative int8 shows its 32 bits, as C's printf).
std::string ValueText(const PrintOperand& o, bool hex, uint64_t bits) {
  char buf[512];
  using Kind = PrintOperand::Kind;
  if (o.kind == Kind::kFloat32 || o.kind == Kind::kFloat16 ||
      o.kind == Kind::kBFloat16) {
    const int width = o.kind == Kind::kFloat32 ? 32 : 16;
    if (hex) {
      std::snprintf(buf, sizeof buf, "0x%0*llx", width / 4,
                    static_cast<unsigned long long>(bits));
      return buf;
    }
    float f;
    if (o.kind == Kind::kFloat32) {
      const uint32_t b = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b, 4);
    } else if (o.kind == Kind::kFloat16) {
      f = isa::HalfBitsToFloat(static_cast<uint16_t>(bits));
    } else {
      f = isa::BFloatBitsToFloat(static_cast<uint16_t>(bits));
    }
    std::snprintf(buf, sizeof buf, "%f", static_cast<double>(f));
    return buf;
  }
  const int w = o.bits;
  const uint64_t mask = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  uint64_t u = bits & mask;
  int64_t s = static_cast<int64_t>(u);
  if (o.kind == Kind::kSigned && w < 64 && w > 1 && (u >> (w - 1)) != 0) {
    s = static_cast<int64_t>(u | ~mask);
  }
  if (hex) {
    const int digits = std::max(1, (w + 7) / 8) * 2;
    const uint64_t shown = o.kind == Kind::kSigned && w < 32
                               ? static_cast<uint64_t>(static_cast<uint32_t>(s))
                               : u;
    std::snprintf(buf, sizeof buf, "0x%0*llx", digits,
                  static_cast<unsigned long long>(shown));
    return buf;
  }
  if (o.kind == Kind::kSigned && w > 1) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(u));
  }
  return buf;
}

}  // namespace

PrintedLines DecodePrintLog(const std::vector<PrintSite>& sites,
                            const uint32_t* words, size_t size) {
  PrintedLines out;
  if (size < static_cast<size_t>(kPrintLogHeaderWords)) return out;
  const uint64_t appended = words[0];
  const uint64_t room =
      (size - kPrintLogHeaderWords) / static_cast<size_t>(kPrintRecordWords);
  const uint64_t kept = std::min<uint64_t>({appended, words[1], room});
  out.dropped = appended - kept;
  std::vector<Record> records;
  records.reserve(kept);
  for (uint64_t i = 0; i < kept; ++i) {
    const uint32_t* r = words + kPrintLogHeaderWords + i * kPrintRecordWords;
    Record rec{r[0] & 0xffffu, r[0] >> 16, r[1], r[2],
               r[3],           r[4],       r[5], r[6] | (uint64_t{r[7]} << 32)};
    if (rec.site >= sites.size() ||
        rec.operand >= sites[rec.site].operands.size()) {
      continue;
    }
    records.push_back(rec);
  }
  std::stable_sort(
      records.begin(), records.end(),
      [](const Record& a, const Record& b) { return a.Key() < b.Key(); });
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    // A register slot that repeats an element records it twice.
    if (i > 0 && records[i - 1].Key() == r.Key()) continue;
    const PrintSite& site = sites[r.site];
    const PrintOperand& o = site.operands[r.operand];
    std::string line = "pid (" + std::to_string(r.x) + ", " +
                       std::to_string(r.y) + ", " + std::to_string(r.z) +
                       ") idx " + IndexText(o.shape, r.index) + site.prefix;
    if (site.operands.size() > 1) {
      line += "(operand " + std::to_string(r.operand) + ") ";
    }
    line += ValueText(o, site.hex, r.bits);
    out.lines.push_back(std::move(line));
  }
  return out;
}

}  // namespace mtlemu::triton::lower
