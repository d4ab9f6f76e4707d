#include "compiler/triton/lower/msl_expr.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace mtlemu::triton::lower {
namespace {

using ir::OpCode;

std::string Call(const std::string& f, const std::vector<std::string>& args) {
  std::string s = f + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

std::string Paren(const std::string& s) { return "(" + s + ")"; }

// The operand as its signed type.
std::string Signed(const std::string& e, int bits) {
  return "((" + SignedType(bits) + ")" + e + ")";
}

// A narrow unsigned operand widened so that arithmetic does not promote to
// int (and overflow): 8- and 16-bit values compute in uint.
std::string Wide(const std::string& e, int bits) {
  if (bits >= 32) return e;
  return "((uint)" + e + ")";
}

const ir::Type* ScalarOf(const ir::Value* v) { return v->type()->ScalarType(); }

// Float math on half and bfloat goes through float for the helpers and
// functions MSL defines only for float.
std::string FloatCall(const std::string& f,
                      const std::vector<std::string>& args, const ir::Type* t) {
  if (t->float_format() == ir::FloatFormat::kF32) return Call(f, args);
  std::vector<std::string> wide;
  for (const std::string& a : args) wide.push_back("(float)" + a);
  const std::string type =
      t->float_format() == ir::FloatFormat::kF16 ? "half" : "bfloat";
  return "(" + type + ")" + Call(f, wide);
}

// libdevice's symbol (tt.extern_elementwise from real Triton's TTIR) ->
// the MSL function computing it.
std::optional<std::string> LibdeviceFunction(const std::string& symbol) {
  std::string n = symbol;
  for (const char* p : {"__nv_", "__ocml_", "__imf_"}) {
    if (n.rfind(p, 0) == 0) n = n.substr(std::string(p).size());
  }
  if (n.rfind("fast_", 0) == 0) n = n.substr(5);
  // Strip the float suffix (__nv_tanhf) and ocml's type suffixes (_f32).
  for (const char* suffix : {"_f32", "_f64", "_f16"}) {
    const std::string s = suffix;
    if (n.size() > s.size() &&
        n.compare(n.size() - s.size(), s.size(), s) == 0) {
      n = n.substr(0, n.size() - s.size());
    }
  }
  static const std::map<std::string, std::string> kNames = {
      {"tanh", "tanh"},
      {"sinh", "sinh"},
      {"cosh", "cosh"},
      {"asinh", "asinh"},
      {"acosh", "acosh"},
      {"atanh", "atanh"},
      {"sin", "sin"},
      {"cos", "cos"},
      {"tan", "tan"},
      {"asin", "asin"},
      {"acos", "acos"},
      {"atan", "atan"},
      {"exp", "exp"},
      {"exp2", "exp2"},
      {"exp10", "exp10"},
      {"log", "log"},
      {"log2", "log2"},
      {"log10", "log10"},
      {"sqrt", "sqrt"},
      {"rsqrt", "rsqrt"},
      {"floor", "floor"},
      {"ceil", "ceil"},
      {"trunc", "trunc"},
      {"round", "round"},
      {"rint", "rint"},
      {"nearbyint", "rint"},
      {"fabs", "fabs"},
      {"erf", "mtlemu_erf"},
      {"log1p", "mtlemu_log1p"},
      {"expm1", "mtlemu_expm1"},
      {"cbrt", "mtlemu_cbrt"},
      {"pow", "pow"},
      {"atan2", "atan2"},
      {"fmod", "fmod"},
      {"fmax", "fmax"},
      {"fmin", "fmin"},
      {"copysign", "copysign"},
      {"fma", "fma"},
      {"isnan", "isnan"},
      {"isinf", "isinf"},
      {"signbit", "signbit"},
      {"dividef", "mtlemu_divide"},
      {"fdividef", "mtlemu_divide"},
      {"div_rn", "mtlemu_divide"},
  };
  // __nv_tanhf: try the name with its trailing f removed first.
  if (n.size() > 1 && n.back() == 'f') {
    auto it = kNames.find(n.substr(0, n.size() - 1));
    if (it != kNames.end()) return it->second;
  }
  auto it = kNames.find(n);
  if (it != kNames.end()) return it->second;
  return std::nullopt;
}

std::string CmpI(const std::string& pred, const std::string& a,
                 const std::string& b, int bits) {
  const bool s = pred[0] == 's';
  std::string x = s ? Signed(a, bits) : a, y = s ? Signed(b, bits) : b;
  // A signed i1 true is -1: it orders below false.
  if (s && bits == 1) std::swap(x, y);
  if (pred == "eq") return a + " == " + b;
  if (pred == "ne") return a + " != " + b;
  const std::string rel = pred.substr(1);
  if (rel == "lt") return x + " < " + y;
  if (rel == "le") return x + " <= " + y;
  if (rel == "gt") return x + " > " + y;
  return x + " >= " + y;
}

std::string CmpF(const std::string& pred, const std::string& a,
                 const std::string& b) {
  const std::string uno = "(isnan(" + a + ") || isnan(" + b + "))";
  if (pred == "oeq") return a + " == " + b;
  if (pred == "olt") return a + " < " + b;
  if (pred == "ole") return a + " <= " + b;
  if (pred == "ogt") return a + " > " + b;
  if (pred == "oge") return a + " >= " + b;
  if (pred == "one") return "(" + a + " != " + b + " && !" + uno + ")";
  if (pred == "une") return a + " != " + b;
  if (pred == "ueq") return "(" + a + " == " + b + " || " + uno + ")";
  if (pred == "ult") return "!(" + a + " >= " + b + ")";
  if (pred == "ule") return "!(" + a + " > " + b + ")";
  if (pred == "ugt") return "!(" + a + " <= " + b + ")";
  if (pred == "uge") return "!(" + a + " < " + b + ")";
  if (pred == "ord") return "!" + uno;
  if (pred == "uno") return uno;
  if (pred == "true") return "true";
  return "false";
}

}  // namespace

std::string SignedType(int bits) {
  switch (bits) {
    case 1:
      return "bool";
    case 8:
      return "char";
    case 16:
      return "short";
    case 64:
      return "long";
    default:
      return "int";
  }
}

std::string UnsignedType(int bits) {
  switch (bits) {
    case 1:
      return "bool";
    case 8:
      return "uchar";
    case 16:
      return "ushort";
    case 64:
      return "ulong";
    default:
      return "uint";
  }
}

Result<std::string> MslType(const ir::Type* t) {
  switch (t->kind()) {
    case ir::TypeKind::kInt:
      return UnsignedType(t->bits());
    case ir::TypeKind::kFloat:
      switch (t->float_format()) {
        case ir::FloatFormat::kF16:
          return std::string("half");
        case ir::FloatFormat::kBF16:
          return std::string("bfloat");
        case ir::FloatFormat::kF32:
          return std::string("float");
        case ir::FloatFormat::kF64:
          return Error{
              "float64 (fp64) is not supported: Apple GPUs have no "
              "64-bit floating point; use float32"};
        default:
          // fp8: Apple GPUs have none; its bytes are held as uchar and
          // converted in software (Fp8ToFloat, FloatToFp8).
          return std::string("uchar");
      }
    case ir::TypeKind::kPointer: {
      if (t->pointee()->IsTensor())
        return Error{"a block pointer is not a scalar"};
      Result<std::string> p = MslType(t->pointee());
      if (!p.ok()) return p;
      return "device " + p.value() + "*";
    }
    default:
      return Error{"no MSL scalar type for " + t->ToString()};
  }
}

std::string IntLiteral(int64_t value, const ir::Type* type) {
  const int bits = type->bits();
  if (bits == 1) return value & 1 ? "true" : "false";
  uint64_t u = static_cast<uint64_t>(value);
  if (bits < 64) u &= (uint64_t{1} << bits) - 1;
  char buf[48];
  if (bits == 64) {
    std::snprintf(buf, sizeof buf, "%lluul",
                  static_cast<unsigned long long>(u));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%lluu", static_cast<unsigned long long>(u));
  if (bits == 32) return buf;
  return "(" + UnsignedType(bits) + ")" + std::string(buf);
}

std::string FloatLiteral(double value, const ir::Type* type) {
  if (type->bits() == 8) {
    char buf[16];
    std::snprintf(
        buf, sizeof buf, "(uchar)0x%02X",
        static_cast<unsigned>(ir::FloatToBits(value, type->float_format())));
    return buf;
  }
  std::string s;
  if (std::isnan(value)) {
    s = "NAN";
  } else if (std::isinf(value)) {
    s = value > 0 ? "INFINITY" : "(-INFINITY)";
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", value);
    s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    s += "f";
  }
  switch (type->float_format()) {
    case ir::FloatFormat::kF16:
      return "(half)" + s;
    case ir::FloatFormat::kBF16:
      return "(bfloat)" + s;
    default:
      return s;
  }
}

namespace {

bool IsFp8(const ir::Type* t) { return t && t->IsFloat() && t->bits() == 8; }

// The expression of `op` on one element with result type `rt` and first
// operand type `t0` (both scalar).
Result<std::optional<std::string>> ElementExprOf(
    const ir::Operation& op, const std::vector<std::string>& x,
    const ir::Type* rt, const ir::Type* t0) {
  const int bits = t0 && t0->IsInt() ? t0->bits() : 0;
  auto bin = [&](const char* o) {
    return Wide(x[0], bits) + " " + o + " " + Wide(x[1], bits);
  };
  auto result_cast = [&](const std::string& e) -> std::string {
    Result<std::string> t = MslType(rt);
    return "(" + (t.ok() ? t.value() : std::string("?")) + ")(" + e + ")";
  };
  // i1 is MSL bool: arithmetic on it is arithmetic mod 2 (add and sub are
  // xor, mul is and), and as a signed value true is -1 (min/max swap).
  if (bits == 1) {
    switch (op.code()) {
      case OpCode::kAddI:
      case OpCode::kSubI:
        return {x[0] + " != " + x[1]};
      case OpCode::kMulI:
        return {x[0] + " && " + x[1]};
      case OpCode::kMaxSI:
        return {x[0] + " && " + x[1]};
      case OpCode::kMinSI:
        return {x[0] + " || " + x[1]};
      default:
        break;
    }
  }
  switch (op.code()) {
    case OpCode::kAddI:
      return {result_cast(bin("+"))};
    case OpCode::kSubI:
      return {result_cast(bin("-"))};
    case OpCode::kMulI:
      return {result_cast(bin("*"))};
    case OpCode::kDivSI:
      return {result_cast(Signed(x[0], bits) + " / " + Signed(x[1], bits))};
    case OpCode::kDivUI:
      return {result_cast(bin("/"))};
    case OpCode::kRemSI:
      return {result_cast(Signed(x[0], bits) + " % " + Signed(x[1], bits))};
    case OpCode::kRemUI:
      return {result_cast(bin("%"))};
    case OpCode::kAndI:
      return {bits == 1 ? x[0] + " && " + x[1] : result_cast(bin("&"))};
    case OpCode::kOrI:
      return {bits == 1 ? x[0] + " || " + x[1] : result_cast(bin("|"))};
    case OpCode::kXOrI:
      return {bits == 1 ? x[0] + " != " + x[1] : result_cast(bin("^"))};
    case OpCode::kShLI:
      return {result_cast(bin("<<"))};
    case OpCode::kShRUI:
      return {result_cast(bin(">>"))};
    case OpCode::kShRSI:
      return {result_cast(Signed(x[0], bits) + " >> " + x[1])};
    case OpCode::kMaxSI:
      return {
          result_cast(Call("max", {Signed(x[0], bits), Signed(x[1], bits)}))};
    case OpCode::kMinSI:
      return {
          result_cast(Call("min", {Signed(x[0], bits), Signed(x[1], bits)}))};
    case OpCode::kMaxUI:
      return {bits == 1 ? x[0] + " || " + x[1]
                        : result_cast(Call("max", {x[0], x[1]}))};
    case OpCode::kMinUI:
      return {bits == 1 ? x[0] + " && " + x[1]
                        : result_cast(Call("min", {x[0], x[1]}))};
    case OpCode::kAddF:
      return {x[0] + " + " + x[1]};
    case OpCode::kSubF:
      return {x[0] + " - " + x[1]};
    case OpCode::kMulF:
      return {x[0] + " * " + x[1]};
    case OpCode::kDivF:
      return {x[0] + " / " + x[1]};
    case OpCode::kRemF:
      return {FloatCall("fmod", {x[0], x[1]}, rt)};
    case OpCode::kMaximumF:
      return {"(isnan(" + x[0] + ") || isnan(" + x[1] + ") ? " +
              FloatLiteral(NAN, rt) + " : " + Call("max", {x[0], x[1]}) + ")"};
    case OpCode::kMinimumF:
      return {"(isnan(" + x[0] + ") || isnan(" + x[1] + ") ? " +
              FloatLiteral(NAN, rt) + " : " + Call("min", {x[0], x[1]}) + ")"};
    case OpCode::kMaxNumF:
      return {Call("fmax", {x[0], x[1]})};
    case OpCode::kMinNumF:
      return {Call("fmin", {x[0], x[1]})};
    case OpCode::kNegF:
      return {"-" + Paren(x[0])};
    case OpCode::kCmpI:
      return {CmpI(op.string_attr("predicate"), x[0], x[1], bits)};
    case OpCode::kCmpF:
      return {CmpF(op.string_attr("predicate"), x[0], x[1])};
    case OpCode::kSelect:
      return {x[0] + " ? " + x[1] + " : " + x[2]};
    case OpCode::kExtSI:
      if (bits == 1) return {result_cast(x[0] + " ? -1 : 0")};
      return {
          result_cast("(" + SignedType(rt->bits()) + ")" + Signed(x[0], bits))};
    case OpCode::kExtUI:
      return {result_cast(x[0])};
    case OpCode::kTruncI:
      if (rt->bits() == 1) return {"(" + x[0] + " & 1) != 0"};
      return {result_cast(x[0])};
    case OpCode::kSIToFP:
      return {result_cast(bits == 1 ? x[0] + " ? -1 : 0" : Signed(x[0], bits))};
    case OpCode::kUIToFP:
      return {result_cast(x[0])};
    case OpCode::kFPToSI:
      return {result_cast("(" + SignedType(rt->bits()) + ")" + x[0])};
    case OpCode::kFPToUI:
      return {result_cast(x[0])};
    case OpCode::kExtF:
    case OpCode::kTruncF:
      return {result_cast(x[0])};
    case OpCode::kBitcast:
    case OpCode::kBitcastTT: {
      Result<std::string> t = MslType(rt);
      if (!t.ok()) return t.error();
      if (rt->IsPointer()) return {"(" + t.value() + ")" + x[0]};
      return {"as_type<" + t.value() + ">(" + x[0] + ")"};
    }
    case OpCode::kExp:
      return {FloatCall("exp", x, rt)};
    case OpCode::kExp2:
      return {FloatCall("exp2", x, rt)};
    case OpCode::kLog:
      return {FloatCall("log", x, rt)};
    case OpCode::kLog2:
      return {FloatCall("log2", x, rt)};
    case OpCode::kLog1p:
      return {FloatCall("mtlemu_log1p", x, rt)};
    case OpCode::kExpM1:
      return {FloatCall("mtlemu_expm1", x, rt)};
    case OpCode::kSqrt:
    case OpCode::kPreciseSqrt:
      return {FloatCall("sqrt", x, rt)};
    case OpCode::kRsqrt:
      return {FloatCall("rsqrt", x, rt)};
    case OpCode::kCbrt:
      return {FloatCall("mtlemu_cbrt", x, rt)};
    case OpCode::kSin:
      return {FloatCall("sin", x, rt)};
    case OpCode::kCos:
      return {FloatCall("cos", x, rt)};
    case OpCode::kTan:
      return {FloatCall("tan", x, rt)};
    case OpCode::kAsin:
      return {FloatCall("asin", x, rt)};
    case OpCode::kAcos:
      return {FloatCall("acos", x, rt)};
    case OpCode::kAtan:
      return {FloatCall("atan", x, rt)};
    case OpCode::kSinh:
      return {FloatCall("sinh", x, rt)};
    case OpCode::kCosh:
      return {FloatCall("cosh", x, rt)};
    case OpCode::kTanh:
      return {FloatCall("tanh", x, rt)};
    case OpCode::kAsinh:
      return {FloatCall("asinh", x, rt)};
    case OpCode::kAcosh:
      return {FloatCall("acosh", x, rt)};
    case OpCode::kAtanh:
      return {FloatCall("atanh", x, rt)};
    case OpCode::kErf:
      return {FloatCall("mtlemu_erf", x, rt)};
    case OpCode::kAbsF:
      return {Call("fabs", x)};
    case OpCode::kAbsI:
      return {result_cast(Call("abs", {Signed(x[0], bits)}))};
    case OpCode::kFloor:
      return {Call("floor", x)};
    case OpCode::kCeil:
      return {Call("ceil", x)};
    case OpCode::kTrunc:
      return {Call("trunc", x)};
    case OpCode::kRound:
      return {Call("round", x)};
    case OpCode::kRoundEven:
      return {Call("rint", x)};
    case OpCode::kCtPop:
      return {result_cast(Call("popcount", x))};
    case OpCode::kCtlz:
      return {result_cast(Call("clz", x))};
    case OpCode::kCttz:
      return {result_cast(Call("ctz", x))};
    case OpCode::kAtan2:
      return {FloatCall("atan2", x, rt)};
    case OpCode::kPowF:
      return {FloatCall("pow", x, rt)};
    case OpCode::kCopySign:
      return {Call("copysign", x)};
    case OpCode::kFma:
      return {Call("fma", x)};
    case OpCode::kPreciseDivF:
      return {x[0] + " / " + x[1]};
    case OpCode::kMulHiUI:
      return {result_cast(Call("mulhi", {x[0], x[1]}))};
    case OpCode::kClampF:
      if (op.string_attr("propagateNan") == "all") {
        return {"(isnan(" + x[0] + ") ? " + x[0] + " : " +
                Call("fmin", {Call("fmax", {x[0], x[1]}), x[2]}) + ")"};
      }
      return {Call("fmin", {Call("fmax", {x[0], x[1]}), x[2]})};
    case OpCode::kAddPtr: {
      const ir::Type* ot = ScalarOf(op.operand(1));
      return {x[0] + " + " + Signed(x[1], ot->bits())};
    }
    case OpCode::kIntToPtr: {
      Result<std::string> t = MslType(rt);
      if (!t.ok()) return t.error();
      return {"(" + t.value() + ")(" + x[0] + ")"};
    }
    case OpCode::kPtrToInt:
      return {"(ulong)(" + x[0] + ")"};
    case OpCode::kFpToFp: {
      const bool narrowing = rt->bits() < t0->bits();
      if (IsFp8(t0) || IsFp8(rt)) {
        // Through float, which holds every value of each format exactly:
        // one rounding, to the target.
        const std::string wide =
            IsFp8(t0) ? Fp8ToFloat(x[0], t0) : "(float)" + x[0];
        if (!IsFp8(rt)) return {result_cast(wide)};
        return {FloatToFp8(wide, rt, op.string_attr("rounding") == "rtz")};
      }
      if (narrowing && op.string_attr("rounding") == "rtz") {
        Result<std::string> t = MslType(rt);
        if (!t.ok()) return t.error();
        return {"mtlemu_round_toward_zero_" + t.value() + "((float)" + x[0] +
                ")"};
      }
      return {result_cast(x[0])};
    }
    case OpCode::kExternElementwise: {
      const std::string symbol = op.string_attr("symbol");
      std::optional<std::string> f = LibdeviceFunction(symbol);
      if (!f) {
        return Error{"tt.extern_elementwise: the library function '" + symbol +
                     "' has no Metal equivalent here"};
      }
      std::string e = FloatCall(*f, x, t0->IsFloat() ? t0 : rt);
      if (rt->IsInt() && (*f == "isnan" || *f == "isinf" || *f == "signbit")) {
        e = result_cast(Call(*f, x));
      }
      return {e};
    }
    default:
      return std::optional<std::string>();
  }
}

}  // namespace

std::string Fp8ToFloat(const std::string& e, const ir::Type* t) {
  const ir::FloatEncoding f = ir::FloatEncodingOf(t->float_format());
  return "mtlemu_fp8_to_float(" + e + ", " + std::to_string(f.mantissa_bits) +
         "u, " + std::to_string(f.bias) + ", " +
         std::to_string(static_cast<int>(f.non_finite)) + "u)";
}

std::string FloatToFp8(const std::string& e, const ir::Type* t,
                       bool toward_zero) {
  const ir::FloatEncoding f = ir::FloatEncodingOf(t->float_format());
  return "mtlemu_float_to_fp8(" + e + ", " + std::to_string(f.mantissa_bits) +
         "u, " + std::to_string(f.bias) + ", " +
         std::to_string(static_cast<int>(f.non_finite)) + "u, " +
         (toward_zero ? "true" : "false") + ")";
}

Result<std::optional<std::string>> ElementExpr(
    const ir::Operation& op, const std::vector<std::string>& x) {
  const ir::Type* rt = op.num_results() ? ScalarOf(op.result()) : nullptr;
  const ir::Type* t0 = op.num_operands() ? ScalarOf(op.operand(0)) : nullptr;
  bool fp8 = IsFp8(rt);
  for (int i = 0; i < op.num_operands(); ++i) {
    fp8 = fp8 || IsFp8(ScalarOf(op.operand(i)));
  }
  switch (op.code()) {
    case OpCode::kFpToFp:
    case OpCode::kBitcast:
    case OpCode::kBitcastTT:
    case OpCode::kSelect:
      fp8 = false;  // on the bytes as they are
      break;
    case OpCode::kAbsF:
    case OpCode::kNegF:
      if (IsFp8(rt)) {
        // The sign bit, as Triton's tl.abs on fp8e4b15 does; an FNUZ
        // format has no negative zero and keeps its NaN (0x80).
        const bool fnuz = ir::FloatEncodingOf(rt->float_format()).non_finite ==
                          ir::NonFinite::kFnuz;
        const std::string v = x[0];
        std::string bits = op.code() == OpCode::kAbsF
                               ? "(uchar)(" + v + " & 0x7Fu)"
                               : "(uchar)(" + v + " ^ 0x80u)";
        if (fnuz)
          bits = "((" + v + " & 0x7Fu) == 0u ? " + v + " : " + bits + ")";
        return {bits};
      }
      break;
    default:
      break;
  }
  if (!fp8) return ElementExprOf(op, x, rt, t0);
  // Other float ops on fp8 compute in float: the operands are widened
  // exactly and the result rounded to nearest even.
  std::vector<std::string> wide = x;
  for (int i = 0; i < op.num_operands(); ++i) {
    const ir::Type* t = ScalarOf(op.operand(i));
    if (IsFp8(t)) wide[i] = Fp8ToFloat(x[i], t);
  }
  const ir::Type* f32 = ir::Type::F32();
  Result<std::optional<std::string>> e =
      ElementExprOf(op, wide, IsFp8(rt) ? f32 : rt, IsFp8(t0) ? f32 : t0);
  if (!e.ok() || !e.value() || !IsFp8(rt)) return e;
  return {FloatToFp8(*e.value(), rt, false)};
}

std::string MslHelpers() {
  return R"(// Functions MSL does not have, written out (fp32).
static inline float mtlemu_log1p(float x) {
  float u = 1.0f + x;
  return u == 1.0f ? x : log(u) * (x / (u - 1.0f));
}
static inline float mtlemu_expm1(float x) {
  float u = exp(x);
  if (u == 1.0f) return x;
  float um1 = u - 1.0f;
  if (um1 == -1.0f) return -1.0f;
  return um1 * (x / log(u));
}
static inline float mtlemu_cbrt(float x) {
  float y = copysign(pow(fabs(x), 1.0f / 3.0f), x);
  return (y == 0.0f || isinf(y)) ? y : y - (y * y * y - x) / (3.0f * y * y);
}
static inline float mtlemu_divide(float x, float y) { return x / y; }
// erf: its Taylor series near 0, else 1 - erfc with erfc's Chebyshev fit
// (fractional error below 1.2e-7; Numerical Recipes, 6.2).
static inline float mtlemu_erf(float x) {
  float a = fabs(x);
  if (a < 0.5f) {
    float x2 = x * x;
    float s = 1.0f / 75600.0f;
    s = s * -x2 + 1.0f / 9360.0f;
    s = s * -x2 + 1.0f / 1320.0f;
    s = s * -x2 + 1.0f / 216.0f;
    s = s * -x2 + 1.0f / 42.0f;
    s = s * -x2 + 1.0f / 10.0f;
    s = s * -x2 + 1.0f / 3.0f;
    s = s * -x2 + 1.0f;
    return 1.1283791670955126f * x * s;
  }
  float t = 1.0f / (1.0f + 0.5f * a);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  float erfc = t * exp(-a * a + p);
  return copysign(1.0f - erfc, x);
}
// Narrowing with rounding toward zero (tt.fp_to_fp rounding = rtz).
static inline half mtlemu_round_toward_zero_half(float x) {
  half h = (half)x;
  if (isfinite(x) && fabs((float)h) > fabs(x)) {
    h = as_type<half>((ushort)(as_type<ushort>(h) - 1));
  }
  return h;
}
static inline bfloat mtlemu_round_toward_zero_bfloat(float x) {
  uint bits = as_type<uint>(x);
  if (!isnan(x)) bits &= 0xFFFF0000u;
  return as_type<bfloat>((ushort)(bits >> 16));
}
// fp8 in software: a byte with `mbits` mantissa bits, 7 - mbits exponent
// bits and exponent bias `bias`; `kind` 0: IEEE (all-ones exponent is inf
// or NaN), 1: FN (no inf; S.1111.111 is NaN), 2: FNUZ (no inf, no -0;
// 0x80 is NaN). 2^e as a float, for the exponents these formats reach.
static inline float mtlemu_pow2(int e) {
  return as_type<float>((uint)(e + 127) << 23);
}
static inline float mtlemu_fp8_to_float(uchar v, uint mbits, int bias,
                                        uint kind) {
  uint ebits = 7u - mbits;
  uint e = ((uint)v >> mbits) & ((1u << ebits) - 1u);
  uint m = (uint)v & ((1u << mbits) - 1u);
  bool negative = (v & 0x80u) != 0u;
  if (kind == 2u && v == 0x80u) return NAN;
  if (kind == 1u && (v & 0x7Fu) == 0x7Fu) return NAN;
  if (kind == 0u && e == (1u << ebits) - 1u) {
    if (m != 0u) return NAN;
    return negative ? -INFINITY : INFINITY;
  }
  float magnitude =
      e == 0u ? (float)m * mtlemu_pow2(1 - bias - (int)mbits)
              : (float)(m | (1u << mbits)) * mtlemu_pow2((int)e - bias - (int)mbits);
  return negative ? -magnitude : magnitude;
}
// Rounded to nearest even (toward zero when `rtz`); finite values past the
// largest finite one saturate to it, as NVIDIA's cvt.satfinite does;
// infinities stay infinite in the IEEE format; NaN stays NaN.
static inline uchar mtlemu_float_to_fp8(float x, uint mbits, int bias,
                                        uint kind, bool rtz) {
  uint sign = (as_type<uint>(x) >> 24) & 0x80u;
  uint ebits = 7u - mbits;
  if (isnan(x)) return kind == 2u ? (uchar)0x80u : (uchar)(sign | 0x7Fu);
  uint max_code = kind == 0u ? ((((1u << ebits) - 2u) << mbits) | ((1u << mbits) - 1u))
                  : kind == 1u ? 0x7Eu : 0x7Fu;
  float a = fabs(x);
  uint code;
  if (isinf(a)) {
    code = kind == 0u ? ((1u << ebits) - 1u) << mbits : max_code;
  } else {
    int e = (int)((as_type<uint>(a) >> 23) & 0xFFu) - 127;
    int emin = 1 - bias;
    int q = max(e, emin) - (int)mbits;
    float scaled = a * mtlemu_pow2(-q);
    float r = rtz ? trunc(scaled) : rint(scaled);
    // Below the normal range the exponent field is 0 and r the mantissa;
    // r may reach 2^(mbits+1) (2^mbits): the carry goes into the exponent.
    code = (uint)((max(e, emin) + bias - 1) << mbits) + (uint)r;
    if (code > max_code) code = max_code;
  }
  if (kind == 2u && code == 0u) return (uchar)0u;
  return (uchar)(sign | code);
}
)";
}

}  // namespace mtlemu::triton::lower
