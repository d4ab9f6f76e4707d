#include "cli/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace mtlemu::cli {
namespace {

using isa::ScalarType;

::testing::AssertionResult Contains(const std::string& s,
                                    const std::string& part) {
  if (s.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << s << "' does not contain '" << part << "'";
}

::testing::AssertionResult BeginsWith(const std::string& s,
                                      const std::string& prefix) {
  if (s.starts_with(prefix)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << s << "' does not start with '" << prefix << "'";
}

// The prefix NumPy writes for format 1.0: magic, version, 2-byte length.
std::string V1Prefix(size_t header_len) {
  return std::string("\x93NUMPY\x01\x00", 8) +
         static_cast<char>(header_len & 0xff) +
         static_cast<char>(header_len >> 8);
}

// A version 1.0 header for `dict`, padded with spaces to a 64-byte boundary
// and ended by '\n', as NumPy writes it.
std::string V1Header(const std::string& dict) {
  size_t total = 10 + dict.size() + 1;
  const size_t padded = (total + 63) / 64 * 64;
  const std::string body = dict + std::string(padded - total, ' ') + "\n";
  return V1Prefix(body.size()) + body;
}

std::string V1Npy(const std::string& dict, const std::string& data) {
  return V1Header(dict) + data;
}

std::string Dict(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr +
         "', 'fortran_order': False, 'shape': " + shape + ", }";
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("mtlemu_npy_test_" + std::to_string(getpid()) + "_" + info->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const {
    return (dir_ / name).string();
  }

  std::string WriteFile(const std::string& name, const std::string& bytes) {
    const std::string path = Path(name);
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Reads `bytes` as a file and returns the error message ("" if it read).
  std::string ReadError(const std::string& bytes) {
    const std::string path = WriteFile("bad.npy", bytes);
    Result<NpyArray> r = ReadNpy(path);
    if (r.ok()) return "";
    EXPECT_TRUE(BeginsWith(r.error().message, path + ": "));
    return r.error().message.substr(path.size() + 2);
  }

  std::filesystem::path dir_;
};

std::vector<uint8_t> Bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// Bytes exactly as `np.save(f, np.arange(5, dtype=np.float32))` writes them
// (NumPy 1.26): its header has extra spaces so the shape can grow in place.
TEST_F(NpyTest, ReadsFileWrittenByNumpy) {
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }";
  const std::string header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                             dict + std::string(118 - 1 - dict.size(), ' ') +
                             "\n";
  ASSERT_EQ(header.size(), 128u);
  const std::string data(
      "\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40"
      "\x00\x00\x80\x40",
      20);
  Result<NpyArray> r = ReadNpy(WriteFile("a.npy", header + data));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().type, ScalarType::kFloat);
  EXPECT_EQ(r.value().descr, "<f4");
  EXPECT_EQ(r.value().shape, std::vector<uint64_t>{5});
  EXPECT_EQ(r.value().ElementCount(), 5u);
  EXPECT_EQ(r.value().data, Bytes(data));
}

TEST_F(NpyTest, HeaderMatchesNumpyLayout) {
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(NpyHeader(ScalarType::kFloat, std::vector<uint64_t>{3}),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                std::string(60, ' ') + "\n");

  const std::string scalar_dict =
      "{'descr': '|b1', 'fortran_order': False, 'shape': (), }";
  EXPECT_EQ(NpyHeader(ScalarType::kBool, {}),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) + scalar_dict +
                std::string(62, ' ') + "\n");

  const std::string header =
      NpyHeader(ScalarType::kBFloat, std::vector<uint64_t>{2, 3, 4});
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_TRUE(Contains(header,
                       "{'descr': '<u2', 'fortran_order': False, "
                       "'shape': (2, 3, 4), }"));
  EXPECT_EQ(header.back(), '\n');
}

TEST_F(NpyTest, WriteProducesHeaderThenData) {
  const std::vector<uint8_t> data = {1, 0, 2, 0, 3, 0};
  const std::string path = Path("w.npy");
  const std::vector<uint64_t> shape = {3};
  ASSERT_TRUE(WriteNpy(path, ScalarType::kShort, shape, data).ok());
  EXPECT_EQ(ReadFile(path),
            V1Npy(Dict("<i2", "(3,)"), std::string("\1\0\2\0\3\0", 6)));
}

TEST_F(NpyTest, DescrOfEveryType) {
  EXPECT_EQ(NpyDescr(ScalarType::kBool), "|b1");
  EXPECT_EQ(NpyDescr(ScalarType::kChar), "|i1");
  EXPECT_EQ(NpyDescr(ScalarType::kUChar), "|u1");
  EXPECT_EQ(NpyDescr(ScalarType::kShort), "<i2");
  EXPECT_EQ(NpyDescr(ScalarType::kUShort), "<u2");
  EXPECT_EQ(NpyDescr(ScalarType::kInt), "<i4");
  EXPECT_EQ(NpyDescr(ScalarType::kUInt), "<u4");
  EXPECT_EQ(NpyDescr(ScalarType::kLong), "<i8");
  EXPECT_EQ(NpyDescr(ScalarType::kULong), "<u8");
  EXPECT_EQ(NpyDescr(ScalarType::kHalf), "<f2");
  EXPECT_EQ(NpyDescr(ScalarType::kBFloat), "<u2");
  EXPECT_EQ(NpyDescr(ScalarType::kFloat), "<f4");
}

TEST_F(NpyTest, DescrParsingAndCompatibility) {
  struct Case {
    const char* descr;
    ScalarType type;
  };
  for (const Case& c :
       {Case{"<f4", ScalarType::kFloat}, Case{"=f4", ScalarType::kFloat},
        Case{"|f4", ScalarType::kFloat}, Case{"f4", ScalarType::kFloat},
        Case{"<f2", ScalarType::kHalf}, Case{"|b1", ScalarType::kBool},
        Case{"<b1", ScalarType::kBool}, Case{"|i1", ScalarType::kChar},
        Case{">i1", ScalarType::kChar}, Case{"|u1", ScalarType::kUChar},
        Case{"<i8", ScalarType::kLong}, Case{"<u8", ScalarType::kULong}}) {
    Result<ScalarType> t = ScalarTypeFromNpyDescr(c.descr);
    ASSERT_TRUE(t.ok()) << c.descr << ": " << t.error().message;
    EXPECT_EQ(t.value(), c.type) << c.descr;
  }
  for (const char* bad : {"<f8", "<c8", "|O", "<U4", "|V4", "", "<", "<f",
                          "<f44", "<fx", "<i3", "S10"}) {
    Result<ScalarType> t = ScalarTypeFromNpyDescr(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_TRUE(Contains(t.error().message, "is not supported")) << bad;
    EXPECT_TRUE(NpyCompatibleTypes(bad).empty()) << bad;
  }
  EXPECT_EQ(ScalarTypeFromNpyDescr(">f4").error().message,
            "dtype '>f4' is big-endian; only little-endian is supported");
  EXPECT_FALSE(ScalarTypeFromNpyDescr("!i4").ok());

  EXPECT_EQ(
      NpyCompatibleTypes("<u2"),
      (std::vector<ScalarType>{ScalarType::kUShort, ScalarType::kBFloat}));
  EXPECT_EQ(NpyCompatibleTypes("<f4"),
            std::vector<ScalarType>{ScalarType::kFloat});
  EXPECT_EQ(NpyCompatibleTypes("<f2"),
            std::vector<ScalarType>{ScalarType::kHalf});
  EXPECT_TRUE(NpyCompatibleTypes(">f4").empty());
}

TEST_F(NpyTest, RoundTripEveryTypeAndShape) {
  const std::vector<std::vector<uint64_t>> shapes = {
      {}, {0}, {1}, {7}, {2, 3, 4}, {3, 0, 2}, {1, 1, 1, 1, 5}};
  for (int t = 0; t < isa::kNumScalarTypes; ++t) {
    const ScalarType type = static_cast<ScalarType>(t);
    for (const std::vector<uint64_t>& shape : shapes) {
      uint64_t count = 1;
      for (uint64_t d : shape) count *= d;
      std::vector<uint8_t> data(count * isa::SizeOf(type));
      for (size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<uint8_t>(i * 37 + t);
      }
      const std::string path = Path("rt.npy");
      Status w = WriteNpy(path, type, shape, data);
      ASSERT_TRUE(w.ok()) << w.error().message;
      Result<NpyArray> r = ReadNpy(path);
      ASSERT_TRUE(r.ok()) << r.error().message;
      const ScalarType read_as =
          type == ScalarType::kBFloat ? ScalarType::kUShort : type;
      EXPECT_EQ(r.value().type, read_as) << isa::MetalName(type);
      EXPECT_EQ(r.value().descr, NpyDescr(type));
      EXPECT_EQ(r.value().shape, shape);
      EXPECT_EQ(r.value().ElementCount(), count);
      EXPECT_EQ(r.value().data, data);
      const std::vector<ScalarType> compatible =
          NpyCompatibleTypes(r.value().descr);
      EXPECT_NE(std::find(compatible.begin(), compatible.end(), type),
                compatible.end());
    }
  }
}

TEST_F(NpyTest, ReadsVersions2And3) {
  const std::string dict = Dict("<i2", "(2,)");
  for (char major : {'\x02', '\x03'}) {
    // Versions 2.0 and 3.0 have a 4-byte header length.
    const size_t total = 12 + dict.size() + 1;
    const size_t padded = (total + 63) / 64 * 64;
    const std::string body = dict + std::string(padded - total, ' ') + "\n";
    const std::string file = std::string("\x93NUMPY", 6) + major + '\0' +
                             static_cast<char>(body.size()) + '\0' + '\0' +
                             '\0' + body + std::string("\x05\x00\xff\xff", 4);
    Result<NpyArray> r = ReadNpy(WriteFile("v.npy", file));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().type, ScalarType::kShort);
    EXPECT_EQ(r.value().data, (std::vector<uint8_t>{5, 0, 0xff, 0xff}));
  }
}

TEST_F(NpyTest, AcceptsHeaderVariants) {
  // Double quotes, other key order, no trailing comma, Python 2 long
  // suffix, spaces, no padding.
  const std::string dict =
      "{\"shape\": ( 2L , 1 ),\"fortran_order\":False,'descr':'=u4'}";
  const std::string file =
      V1Prefix(dict.size()) + dict + std::string(8, '\x01');
  Result<NpyArray> r = ReadNpy(WriteFile("v.npy", file));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().type, ScalarType::kUInt);
  EXPECT_EQ(r.value().shape, (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(r.value().data.size(), 8u);
}

TEST_F(NpyTest, IgnoresTrailingBytesLikeNumpy) {
  const std::string file = V1Npy(Dict("|u1", "(2,)"), "\x07\x08trailing");
  Result<NpyArray> r = ReadNpy(WriteFile("t.npy", file));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().data, (std::vector<uint8_t>{7, 8}));
}

TEST_F(NpyTest, RejectsBadMagic) {
  EXPECT_EQ(ReadError(""), "not a .npy file (bad magic)");
  EXPECT_EQ(ReadError("\x93NUM"), "not a .npy file (bad magic)");
  EXPECT_EQ(ReadError("PK\x03\x04 this is a zip file"),
            "not a .npy file (bad magic)");
  EXPECT_EQ(ReadError(std::string("\x93numpy\x01\x00", 8)),
            "not a .npy file (bad magic)");
}

TEST_F(NpyTest, RejectsTruncatedHeader) {
  const std::string good = V1Npy(Dict("<f4", "(1,)"), "abcd");
  EXPECT_TRUE(Contains(ReadError(good.substr(0, 7)), "truncated header"));
  EXPECT_TRUE(Contains(ReadError(good.substr(0, 9)), "truncated header"));
  EXPECT_EQ(ReadError(good.substr(0, 30)),
            "truncated header (expected 118 header bytes, found 20)");
  // A version 2.0 length field cut short.
  EXPECT_TRUE(Contains(ReadError(std::string("\x93NUMPY\x02\x00\x10\x00", 10)),
                       "truncated header"));
}

TEST_F(NpyTest, RejectsTruncatedData) {
  const std::string file = V1Npy(Dict("<f4", "(2, 3)"), std::string(20, 'x'));
  EXPECT_EQ(ReadError(file),
            "truncated data: the shape needs 24 bytes of array data but the "
            "file has 20");
}

TEST_F(NpyTest, RejectsBigEndian) {
  const std::string file = V1Npy(Dict(">f4", "(1,)"), "abcd");
  EXPECT_EQ(ReadError(file),
            "dtype '>f4' is big-endian; only little-endian is supported");
}

TEST_F(NpyTest, RejectsFortranOrder) {
  const std::string file = V1Npy(
      "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }", "abcd");
  EXPECT_EQ(ReadError(file),
            "fortran_order is True; only C-order arrays are supported");
}

TEST_F(NpyTest, RejectsUnsupportedVersion) {
  std::string file = V1Npy(Dict("<f4", "(1,)"), "abcd");
  file[6] = '\x04';
  EXPECT_EQ(ReadError(file),
            "unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
  file[6] = '\x01';
  file[7] = '\x01';
  EXPECT_TRUE(Contains(ReadError(file), "unsupported .npy format version"));
}

TEST_F(NpyTest, RejectsUnsupportedDtypes) {
  EXPECT_TRUE(Contains(ReadError(V1Npy(Dict("<f8", "(1,)"), "abcdefgh")),
                       "dtype '<f8' is not supported (supported: '|b1' "
                       "bool, '|i1' char"));
  EXPECT_TRUE(Contains(
      ReadError(V1Npy("{'descr': [('a', '<i4')], 'fortran_order': False, "
                      "'shape': (1,), }",
                      "abcd")),
      "structured dtypes"));
}

TEST_F(NpyTest, RejectsBadShapes) {
  auto shape_error = [&](const std::string& shape) {
    return ReadError(V1Npy(Dict("|u1", shape), std::string(64, 'x')));
  };
  EXPECT_TRUE(Contains(shape_error("(-1,)"), "negative dimension"));
  EXPECT_TRUE(Contains(shape_error("(3)"), "must be a tuple"));
  EXPECT_TRUE(Contains(shape_error("[3]"), "expected a tuple for 'shape'"));
  EXPECT_TRUE(Contains(shape_error("(1.5,)"), "expected ',' or ')'"));
  EXPECT_TRUE(Contains(shape_error("(a,)"), "expected an integer"));
  EXPECT_TRUE(Contains(shape_error("(2 3)"), "expected ',' or ')'"));
  EXPECT_TRUE(Contains(shape_error("(,)"), "expected an integer"));
  EXPECT_TRUE(Contains(shape_error("(2,"), "malformed header"));
  EXPECT_TRUE(Contains(shape_error("(99999999999999999999,)"),
                       "does not fit in 64 bits"));
  std::string deep = "(";
  for (int i = 0; i < 65; ++i) deep += "1, ";
  EXPECT_TRUE(Contains(shape_error(deep + ")"), "more than 64 dimensions"));
}

TEST_F(NpyTest, RejectsShapeOverflowWithoutAllocating) {
  // The element count overflows 64 bits.
  EXPECT_TRUE(
      Contains(ReadError(V1Npy(Dict("|u1", "(4294967296, 4294967296)"), "")),
               "has too many elements"));
  // The count fits but the byte size does not.
  EXPECT_TRUE(
      Contains(ReadError(V1Npy(Dict("<f4", "(4611686018427387904,)"), "")),
               "has too many elements"));
  // Fits in 64 bits but is far larger than the file: an error, not a
  // terabyte allocation.
  EXPECT_EQ(ReadError(V1Npy(Dict("<u8", "(1099511627776,)"), "12345678")),
            "truncated data: the shape needs 8796093022208 bytes of array "
            "data but the file has 8");
  // A zero dimension makes an empty array whatever the other dimensions.
  Result<NpyArray> r = ReadNpy(
      WriteFile("z.npy", V1Npy(Dict("<f4", "(0, 18446744073709551615)"), "")));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().ElementCount(), 0u);
  EXPECT_TRUE(r.value().data.empty());
}

TEST_F(NpyTest, RejectsMalformedDicts) {
  auto error = [&](const std::string& dict) {
    return ReadError(V1Npy(dict, "abcd"));
  };
  EXPECT_TRUE(Contains(error("'descr': '<f4'"), "expected '{'"));
  EXPECT_TRUE(Contains(error("{'descr': '<f4', 'fortran_order': False}"),
                       "header has no 'shape' key"));
  EXPECT_TRUE(Contains(error("{'fortran_order': False, 'shape': (1,)}"),
                       "header has no 'descr' key"));
  EXPECT_TRUE(Contains(error("{'descr': '<f4', 'shape': (1,)}"),
                       "header has no 'fortran_order' key"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                     "'extra': 1}"),
               "unexpected key 'extra'"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': "
                     "False, 'shape': (1,)}"),
               "duplicate key 'descr'"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}"),
               "malformed header"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}"),
               "expected True or False"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}"),
               "expected ',' or '}'"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} "
                     "x"),
               "unexpected text after '}'"));
  EXPECT_TRUE(
      Contains(error("{'descr': '<\\f4', 'fortran_order': False, 'shape': "
                     "(1,)}"),
               "escapes"));
  EXPECT_TRUE(Contains(error("{'descr'"), "expected ':'"));
  EXPECT_TRUE(Contains(error(""), "expected '{'"));
}

TEST_F(NpyTest, RejectsHugeHeaderLength) {
  const std::string file =
      std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{";
  EXPECT_EQ(ReadError(file),
            "header length 4294967295 exceeds the limit of 1048576 bytes");
}

TEST_F(NpyTest, MissingFileAndDirectory) {
  const std::string missing = Path("missing.npy");
  Result<NpyArray> r = ReadNpy(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            missing + ": cannot open for reading: No such file or directory");
  Result<NpyArray> d = ReadNpy(dir_.string());
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(BeginsWith(d.error().message, dir_.string() + ": "));
}

TEST_F(NpyTest, WriteErrors) {
  const std::vector<uint64_t> shape = {2, 2};
  const std::vector<uint8_t> data(15);
  const std::string path = Path("w.npy");
  Status s = WriteNpy(path, ScalarType::kFloat, shape, data);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            path +
                ": cannot write 15 bytes as float with shape (2, 2) (size "
                "mismatch)");

  const std::vector<uint64_t> overflow = {uint64_t{1} << 62, 8};
  EXPECT_FALSE(WriteNpy(path, ScalarType::kUChar, overflow, data).ok());

  const std::string bad_dir = Path("no/such/dir/w.npy");
  Status d =
      WriteNpy(bad_dir, ScalarType::kUChar, std::vector<uint64_t>{15}, data);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message,
            bad_dir + ": cannot open for writing: No such file or directory");

  const std::vector<uint64_t> deep(65, 1);
  EXPECT_TRUE(
      Contains(WriteNpy(path, ScalarType::kUChar, deep, data).error().message,
               "at most 64"));
}

// ParseNpy reads a file's bytes as ReadNpy reads the file: the same array,
// or the same error with the name given instead of the path.
TEST_F(NpyTest, ParseNpyReadsBytesAsReadNpyReadsTheFile) {
  const std::string good =
      V1Npy(Dict("<i4", "(2, 3)"), std::string(24, '\x11')) + "trailing";
  std::vector<std::string> files;
  for (size_t n = 0; n <= good.size(); n += 7) {
    files.push_back(good.substr(0, n));
  }
  files.push_back(std::string("\x93NUMPY\x02\x00\x10\x00", 10));
  files.push_back(V1Npy(Dict("<u8", "(1099511627776,)"), "12345678"));
  files.push_back(V1Npy(Dict(">f4", "(1,)"), "abcd"));
  for (const std::string& file : files) {
    const std::string path = WriteFile("same.npy", file);
    const Result<NpyArray> read = ReadNpy(path);
    const Result<NpyArray> parsed = ParseNpy(Bytes(file), path);
    ASSERT_EQ(read.ok(), parsed.ok()) << file.size();
    if (read.ok()) {
      EXPECT_EQ(read.value().type, parsed.value().type);
      EXPECT_EQ(read.value().shape, parsed.value().shape);
      EXPECT_EQ(read.value().data, parsed.value().data);
    } else {
      EXPECT_EQ(read.error().message, parsed.error().message);
    }
  }
  const Result<NpyArray> named = ParseNpy({}, "in memory");
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.error().message, "in memory: not a .npy file (bad magic)");
}

// Every prefix and many single-byte corruptions of a valid file: each must
// read or fail cleanly.
TEST_F(NpyTest, SurvivesCorruptedInput) {
  const std::string good =
      V1Npy(Dict("<i4", "(2, 3)"), std::string(24, '\x11'));
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_NE(ReadError(good.substr(0, n)), "") << n;
  }
  EXPECT_EQ(ReadError(good), "");
  const char replacements[] = {'\0', '\xff', '(', ')', '\'', ',', '9', '-',
                               '{',  '}',    ':', ' ', '"',  '[', 'L'};
  for (size_t i = 0; i < 90; ++i) {
    for (char c : replacements) {
      std::string bad = good;
      bad[i] = c;
      (void)ReadError(bad);
    }
  }
}

}  // namespace
}  // namespace mtlemu::cli
