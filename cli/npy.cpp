#include "cli/npy.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

namespace mtlemu::cli {
namespace {

using isa::ScalarType;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// Headers beyond this are refused before allocating (NumPy's own default
// limit is 10000 bytes).
constexpr uint64_t kMaxHeaderLen = uint64_t{1} << 20;
constexpr size_t kAlign = 64;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Error FileError(const std::string& path, std::string_view what) {
  return Error{path + ": " + std::string(what)};
}

std::string ErrnoText() { return std::strerror(errno); }

// One row per supported dtype: kind letter and size name a scalar type.
struct DescrInfo {
  char kind;  // 'b', 'i', 'u' or 'f'
  int size;
  ScalarType type;
};
constexpr DescrInfo kDescrs[] = {
    {'b', 1, ScalarType::kBool},   {'i', 1, ScalarType::kChar},
    {'u', 1, ScalarType::kUChar},  {'i', 2, ScalarType::kShort},
    {'u', 2, ScalarType::kUShort}, {'i', 4, ScalarType::kInt},
    {'u', 4, ScalarType::kUInt},   {'i', 8, ScalarType::kLong},
    {'u', 8, ScalarType::kULong},  {'f', 2, ScalarType::kHalf},
    {'f', 4, ScalarType::kFloat},
};

std::string SupportedDescrList() {
  std::string s;
  for (const DescrInfo& d : kDescrs) {
    if (!s.empty()) s += ", ";
    s += "'" + NpyDescr(d.type) + "' " + std::string(isa::MetalName(d.type));
  }
  return s;
}

// Multiplies the dimensions; nullopt on overflow of 64 bits.
std::optional<uint64_t> CheckedProduct(std::span<const uint64_t> shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d) {
      // Overflow, unless a later dimension is 0.
      for (uint64_t e : shape) {
        if (e == 0) return 0;
      }
      return std::nullopt;
    }
    n *= d;
  }
  return n;
}

std::string ShapeRepr(std::span<const uint64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// Parser for the header dict, a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// Accepts exactly the keys descr, fortran_order and shape, in any order.
class HeaderParser {
 public:
  struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<uint64_t> shape;
  };

  explicit HeaderParser(std::string_view text) : s_(text) {}

  Result<Header> Parse() {
    Header h;
    bool have_descr = false, have_fortran = false, have_shape = false;
    if (!Consume('{')) return Fail("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      const size_t key_pos = pos_;
      std::string key;
      if (Status st = ParseString(&key); !st.ok()) return st.error();
      if (!Consume(':')) return Fail("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (have_descr) return FailAt(key_pos, "duplicate key 'descr'");
        have_descr = true;
        if (Peek() == '[') {
          return Fail(
              "structured dtypes (a list as 'descr') are not supported");
        }
        if (Status st = ParseString(&h.descr); !st.ok()) return st.error();
      } else if (key == "fortran_order") {
        if (have_fortran) {
          return FailAt(key_pos, "duplicate key 'fortran_order'");
        }
        have_fortran = true;
        if (Status st = ParseBool(&h.fortran_order); !st.ok()) {
          return st.error();
        }
      } else if (key == "shape") {
        if (have_shape) return FailAt(key_pos, "duplicate key 'shape'");
        have_shape = true;
        if (Status st = ParseShape(&h.shape); !st.ok()) return st.error();
      } else {
        return FailAt(key_pos, "unexpected key '" + key +
                                   "' (expected descr, fortran_order, shape)");
      }
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume('}')) break;
      return Fail("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != s_.size()) return Fail("unexpected text after '}'");
    if (!have_descr) return Error{"header has no 'descr' key"};
    if (!have_fortran) return Error{"header has no 'fortran_order' key"};
    if (!have_shape) return Error{"header has no 'shape' key"};
    return h;
  }

 private:
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // Skips spaces, then consumes `c` if it is next.
  bool Consume(char c) {
    SkipSpace();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }

  Error FailAt(size_t pos, const std::string& what) const {
    return Error{"malformed header at offset " + std::to_string(pos) + ": " +
                 what};
  }
  Error Fail(const std::string& what) const { return FailAt(pos_, what); }

  Status ParseString(std::string* out) {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("expected a string");
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') return Fail("escapes in strings are not supported");
      if (s_[pos_] == '\n') return Fail("unterminated string");
      ++pos_;
    }
    if (pos_ == s_.size()) return FailAt(start - 1, "unterminated string");
    *out = std::string(s_.substr(start, pos_ - start));
    ++pos_;
    return {};
  }

  Status ParseBool(bool* out) {
    if (s_.substr(pos_).starts_with("True")) {
      *out = true;
      pos_ += 4;
    } else if (s_.substr(pos_).starts_with("False")) {
      *out = false;
      pos_ += 5;
    } else {
      return Fail("expected True or False for 'fortran_order'");
    }
    return {};
  }

  // A tuple of non-negative integers: (), (3,), (3, 4), (3, 4,).
  Status ParseShape(std::vector<uint64_t>* out) {
    if (!Consume('(')) return Fail("expected a tuple for 'shape'");
    if (Consume(')')) return {};
    while (true) {
      if (out->size() >= kNpyMaxRank) {
        return Fail("shape has more than " + std::to_string(kNpyMaxRank) +
                    " dimensions");
      }
      uint64_t dim = 0;
      if (Status st = ParseDim(&dim); !st.ok()) return st;
      out->push_back(dim);
      const bool comma = Consume(',');
      if (Consume(')')) {
        // "(3)" is the integer 3 in Python, not a tuple.
        if (out->size() == 1 && !comma) {
          return Fail(
              "'shape' must be a tuple; a one-element tuple needs a "
              "trailing comma");
        }
        return {};
      }
      if (!comma) return Fail("expected ',' or ')' in 'shape'");
    }
  }

  Status ParseDim(uint64_t* out) {
    SkipSpace();
    if (Peek() == '-') return Fail("negative dimension in 'shape'");
    if (Peek() < '0' || Peek() > '9') {
      return Fail("expected an integer in 'shape'");
    }
    const size_t start = pos_;
    uint64_t v = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      const uint64_t digit = static_cast<uint64_t>(Peek() - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        return FailAt(start, "dimension in 'shape' does not fit in 64 bits");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    if (Peek() == 'L' || Peek() == 'l') ++pos_;  // Python 2 long suffix.
    *out = v;
    return {};
  }

  std::string_view s_;
  size_t pos_ = 0;
};

uint64_t LoadLE(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Where an .npy file's bytes come from: an open file, read as needed, or
// bytes in memory. Both give ReadFrom() the same view, so a file and its
// bytes read alike, with the same errors.
class FileSource {
 public:
  explicit FileSource(std::FILE* f) : f_(f) {}

  // Reads up to `n` bytes into `out`; fewer at the end of the file or on an
  // error (see error()).
  size_t Read(void* out, size_t n) { return std::fread(out, 1, n, f_); }
  std::optional<std::string> error() const {
    if (!std::ferror(f_)) return std::nullopt;
    return "read error: " + ErrnoText();
  }
  // The bytes left, if known: a pipe or device's are not.
  std::optional<uint64_t> Remaining() const {
    struct stat st;
    if (fstat(fileno(f_), &st) != 0 || !S_ISREG(st.st_mode)) {
      return std::nullopt;
    }
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    const long pos = std::ftell(f_);
    if (pos < 0) return std::nullopt;
    const uint64_t offset = static_cast<uint64_t>(pos);
    return size > offset ? size - offset : 0;
  }

 private:
  std::FILE* f_;
};

class MemorySource {
 public:
  explicit MemorySource(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  size_t Read(void* out, size_t n) {
    n = std::min(n, bytes_.size());
    if (n > 0) std::memcpy(out, bytes_.data(), n);
    bytes_ = bytes_.subspan(n);
    return n;
  }
  std::optional<std::string> error() const { return std::nullopt; }
  std::optional<uint64_t> Remaining() const { return bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
};

// Reads `n` bytes of array data into `data`. Sizes the buffer by the bytes
// left when the source knows them, so a hostile shape cannot make us
// allocate more than the file holds.
template <typename Source>
Status ReadData(const std::string& name, Source& in, uint64_t n,
                std::vector<uint8_t>* data) {
  auto truncated = [&](uint64_t have) {
    return FileError(name, "truncated data: the shape needs " +
                               std::to_string(n) +
                               " bytes of array data but the file has " +
                               std::to_string(have));
  };
  if (n == 0) return {};
  if (const std::optional<uint64_t> have = in.Remaining()) {
    if (*have < n) return truncated(*have);
    data->resize(n);
    const size_t got = in.Read(data->data(), n);
    if (got != n) {
      if (auto e = in.error()) return FileError(name, *e);
      return truncated(got);
    }
    return {};
  }
  // A pipe or device: read in chunks until we have n bytes or hit the end.
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  uint64_t have = 0;
  while (have < n) {
    const uint64_t want = std::min(kChunk, n - have);
    data->resize(have + want);
    const size_t got = in.Read(data->data() + have, want);
    have += got;
    if (got != want) {
      if (auto e = in.error()) return FileError(name, *e);
      return truncated(have);
    }
  }
  return {};
}

// The array of an .npy file read from `in`; errors start with `name`.
template <typename Source>
Result<NpyArray> ReadFrom(Source& in, const std::string& name) {
  unsigned char prefix[kMagicLen + 2];
  size_t got = in.Read(prefix, sizeof(prefix));
  if (auto e = in.error()) return FileError(name, *e);
  if (got < kMagicLen || std::memcmp(prefix, kMagic, kMagicLen) != 0) {
    return FileError(name, "not a .npy file (bad magic)");
  }
  if (got < sizeof(prefix)) {
    return FileError(name, "truncated header (no format version)");
  }
  const int major = prefix[kMagicLen], minor = prefix[kMagicLen + 1];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return FileError(
        name, "unsupported .npy format version " + std::to_string(major) + "." +
                  std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }
  const int len_size = major == 1 ? 2 : 4;
  unsigned char len_bytes[4];
  if (in.Read(len_bytes, len_size) != static_cast<size_t>(len_size)) {
    return FileError(name, "truncated header (no header length)");
  }
  const uint64_t header_len = LoadLE(len_bytes, len_size);
  if (header_len > kMaxHeaderLen) {
    return FileError(name, "header length " + std::to_string(header_len) +
                               " exceeds the limit of " +
                               std::to_string(kMaxHeaderLen) + " bytes");
  }
  std::string header_text(header_len, '\0');
  got = in.Read(header_text.data(), header_len);
  if (got != header_len) {
    return FileError(
        name, "truncated header (expected " + std::to_string(header_len) +
                  " header bytes, found " + std::to_string(got) + ")");
  }

  Result<HeaderParser::Header> header = HeaderParser(header_text).Parse();
  if (!header.ok()) return FileError(name, header.error().message);
  if (header.value().fortran_order) {
    return FileError(name,
                     "fortran_order is True; only C-order arrays are "
                     "supported");
  }
  Result<ScalarType> type = ScalarTypeFromNpyDescr(header.value().descr);
  if (!type.ok()) return FileError(name, type.error().message);

  NpyArray array;
  array.type = type.value();
  array.descr = std::move(header.value().descr);
  array.shape = std::move(header.value().shape);
  const std::optional<uint64_t> count = CheckedProduct(array.shape);
  const uint64_t elem_size = isa::SizeOf(array.type);
  if (!count || *count > std::numeric_limits<uint64_t>::max() / elem_size) {
    return FileError(name, "shape " + ShapeRepr(array.shape) +
                               " has too many elements (the byte size "
                               "overflows 64 bits)");
  }
  if (Status st = ReadData(name, in, *count * elem_size, &array.data);
      !st.ok()) {
    return st.error();
  }
  return array;
}

}  // namespace

uint64_t NpyArray::ElementCount() const {
  return CheckedProduct(shape).value_or(0);
}

std::string NpyDescr(ScalarType type) {
  if (type == ScalarType::kBFloat) return "<u2";
  for (const DescrInfo& d : kDescrs) {
    if (d.type == type) {
      return std::string(1, d.size == 1 ? '|' : '<') + d.kind +
             std::to_string(d.size);
    }
  }
  return "";  // Unreachable: every other type has a row.
}

Result<ScalarType> ScalarTypeFromNpyDescr(std::string_view descr) {
  const std::string quoted = "dtype '" + std::string(descr) + "'";
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() &&
      std::string_view("<>=|!").find(rest[0]) != std::string_view::npos) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (rest.size() >= 2 && rest.size() <= 3) {
    const char kind = rest[0];
    int size = 0;
    bool digits = true;
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9') digits = false;
      size = size * 10 + (c - '0');
    }
    for (const DescrInfo& d : kDescrs) {
      if (!digits || d.kind != kind || d.size != size) continue;
      const bool big =
          order == '>' || order == '!' ||
          (order == '=' && std::endian::native != std::endian::little);
      if (big && size > 1) {
        return Error{quoted +
                     " is big-endian; only little-endian is supported"};
      }
      return d.type;
    }
  }
  return Error{quoted +
               " is not supported (supported: " + SupportedDescrList() + ")"};
}

std::vector<ScalarType> NpyCompatibleTypes(std::string_view descr) {
  Result<ScalarType> t = ScalarTypeFromNpyDescr(descr);
  if (!t.ok()) return {};
  if (t.value() == ScalarType::kUShort) {
    return {ScalarType::kUShort, ScalarType::kBFloat};
  }
  return {t.value()};
}

std::string NpyHeader(ScalarType type, std::span<const uint64_t> shape) {
  // The dict as NumPy writes it: keys sorted, each followed by ", ".
  std::string dict = "{'descr': '" + NpyDescr(type) +
                     "', 'fortran_order': False, 'shape': " + ShapeRepr(shape) +
                     ", }";
  // Pad with spaces and a final newline so the data starts aligned.
  auto padded = [&](size_t prefix_len) {
    const size_t unpadded = prefix_len + dict.size() + 1;
    const size_t pad = (kAlign - unpadded % kAlign) % kAlign;
    return dict + std::string(pad, ' ') + "\n";
  };
  std::string header = std::string(kMagic, kMagicLen);
  std::string body = padded(kMagicLen + 2 + 2);
  if (body.size() <= 0xffff) {
    header += std::string("\x01\x00", 2);
    header += static_cast<char>(body.size() & 0xff);
    header += static_cast<char>(body.size() >> 8);
  } else {
    body = padded(kMagicLen + 2 + 4);
    header += std::string("\x02\x00", 2);
    for (int i = 0; i < 4; ++i) {
      header += static_cast<char>((body.size() >> (8 * i)) & 0xff);
    }
  }
  return header + body;
}

Result<NpyArray> ReadNpy(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return FileError(path, "cannot open for reading: " + ErrnoText());
  FileSource in(f.get());
  return ReadFrom(in, path);
}

Result<NpyArray> ParseNpy(std::span<const uint8_t> bytes,
                          const std::string& name) {
  MemorySource in(bytes);
  return ReadFrom(in, name);
}

Status WriteNpy(const std::string& path, ScalarType type,
                std::span<const uint64_t> shape,
                std::span<const uint8_t> data) {
  if (shape.size() > kNpyMaxRank) {
    return FileError(path, "cannot write " + std::to_string(shape.size()) +
                               " dimensions (at most " +
                               std::to_string(kNpyMaxRank) + ")");
  }
  const std::optional<uint64_t> count = CheckedProduct(shape);
  const uint64_t elem_size = isa::SizeOf(type);
  if (!count || *count > std::numeric_limits<uint64_t>::max() / elem_size ||
      *count * elem_size != data.size()) {
    return FileError(
        path, "cannot write " + std::to_string(data.size()) + " bytes as " +
                  std::string(isa::MetalName(type)) + " with shape " +
                  ShapeRepr(shape) + " (size mismatch)");
  }
  const std::string header = NpyHeader(type, shape);
  // Into a file beside it, renamed over it once whole: a failed write
  // never leaves a truncated file where a good one was.
  const std::string partial = path + ".partial";
  File f(std::fopen(partial.c_str(), "wb"));
  if (!f) return FileError(path, "cannot open for writing: " + ErrnoText());
  const bool written =
      std::fwrite(header.data(), 1, header.size(), f.get()) == header.size() &&
      (data.empty() ||
       std::fwrite(data.data(), 1, data.size(), f.get()) == data.size());
  const std::string write_error = written ? "" : ErrnoText();
  if (std::fclose(f.release()) != 0 || !written) {
    const std::string why = written ? ErrnoText() : write_error;
    std::remove(partial.c_str());
    return FileError(path, "write error: " + why);
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const std::string why = ErrnoText();
    std::remove(partial.c_str());
    return FileError(path, "cannot replace: " + why);
  }
  return {};
}

}  // namespace mtlemu::cli
