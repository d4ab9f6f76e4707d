#include "compiler/msl/attribute_rewriter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/msl/source_scan.h"
#include "compiler/msl/vec_deduction.h"

namespace mtlemu::msl {
namespace {

// C++ attributes that are not Metal's and stay as they are.
constexpr std::array<std::string_view, 9> kStandardAttributes = {
    "maybe_unused", "nodiscard",          "fallthrough",
    "likely",       "unlikely",           "noreturn",
    "deprecated",   "carries_dependency", "no_unique_address"};

constexpr size_t npos = std::string_view::npos;

// Function-pointer template parameters, `template <float (*F)(float)>`: in
// C++ for OpenCL the pointee of a pointer written that way is in the generic
// address space, so `&f` needs a conversion and is no constant expression
// ("invalid explicitly-specified argument"). Such a parameter becomes a
// reference to a function, `float (&F)(float)`, which takes a function and
// deduces a function template's arguments from its type as the pointer
// does (llama.cpp: `kernel_mul_mv_ext_q4_f32_disp<2, block_q8_0, 32,
// dequantize_q8_0_t4>` with `template <typename type4> void
// dequantize_q8_0_t4(..., thread type4 &)`); one whose type is an alias
// of a function pointer type (MLX's FFT: `RadixFunc<T> radix_func`, with
// `template <typename T> using RadixFunc = void (*)(...)`), named in
// `aliases`, becomes `auto F`. Returns the parameters found in the
// template header at `i` ("template" followed by "<") as (start, end,
// name, and the `*`'s offset where written), offsets into `s`; empty for
// anything else.
struct FunctionPointerParameter {
  size_t start, end;
  std::string name;
  size_t star = std::string_view::npos;
};

// The names of function pointer type aliases: `using NAME = R (*)(...);`
// (also as alias templates) and `typedef R (*NAME)(...);`.
std::vector<std::string> FunctionPointerAliases(std::string_view s) {
  std::vector<std::string> out;
  auto pointer_declarator = [&](size_t open, size_t end) -> size_t {
    // `( * [NAME] ) (` from `open`: the end of NAME, or npos.
    size_t k = SkipSpace(s, open + 1);
    if (k >= end || s[k] != '*') return npos;
    const size_t name_end = IdentifierEnd(s, SkipSpace(s, k + 1));
    k = SkipSpace(s, name_end);
    if (k >= end || s[k] != ')') return npos;
    k = SkipSpace(s, k + 1);
    return k < end && s[k] == '(' ? name_end : npos;
  };
  for (std::string_view word : {"using", "typedef"}) {
    for (size_t i = s.find(word); i != npos; i = s.find(word, i + 1)) {
      if (!WordAt(s, i, word)) continue;
      const size_t end = s.find(';', i);
      if (end == npos) break;
      const size_t open = s.find('(', i);
      if (open == npos || open > end) continue;
      const size_t name_end = pointer_declarator(open, end);
      if (name_end == npos) continue;
      if (word == "using") {
        const size_t k = SkipSpace(s, i + 5);
        const size_t e = IdentifierEnd(s, k);
        if (e > k && e < end && s.find('=', e) < open) {
          out.emplace_back(s.substr(k, e - k));
        }
      } else {
        size_t k = name_end;
        while (k > open && IsIdentifierChar(s[k - 1])) --k;
        if (k < name_end) out.emplace_back(s.substr(k, name_end - k));
      }
    }
  }
  return out;
}

std::vector<FunctionPointerParameter> FunctionPointerParameters(
    std::string_view s, size_t i, const std::vector<std::string>& aliases) {
  std::vector<FunctionPointerParameter> out;
  if (s.compare(i, 8, "template") != 0 ||
      (i > 0 && IsIdentifierChar(s[i - 1]))) {
    return out;
  }
  size_t j = i + 8;
  while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  if (j >= s.size() || s[j] != '<') return out;
  auto skip_space = [&](size_t k) {
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    return k;
  };
  // Parameters at angle depth 1, outside parentheses.
  int angles = 1, parens = 0;
  size_t param_start = j + 1;
  for (size_t k = j + 1; k < s.size() && angles > 0; ++k) {
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++parens;
    if (c == ')' || c == ']' || c == '}') --parens;
    if (parens == 0 && c == '<') ++angles;
    const bool closes = parens == 0 && c == '>' && --angles == 0;
    if (!(closes || (parens == 0 && angles == 1 && c == ','))) continue;
    // One parameter: [param_start, k). Look for "( * NAME ) (...)".
    const std::string_view p = s.substr(param_start, k - param_start);
    const size_t open = p.find('(');
    if (open != std::string_view::npos) {
      size_t q = skip_space(param_start + open + 1);
      if (q < k && s[q] == '*') {
        const size_t star = q;
        q = skip_space(q + 1);
        const size_t name_start = q;
        while (q < k && IsIdentifierChar(s[q])) ++q;
        const size_t name_end = q;
        q = skip_space(q);
        if (name_end > name_start && q < k && s[q] == ')') {
          q = skip_space(q + 1);
          if (q < k && s[q] == '(') {
            const size_t r = MatchingClose(s, q);
            if (r < k) {
              out.push_back(
                  {skip_space(param_start), r + 1,
                   std::string(s.substr(name_start, name_end - name_start)),
                   star});
            }
          }
        }
      }
    } else if (const size_t start = skip_space(param_start); start < k) {
      // `ALIAS<...> NAME` or `ALIAS NAME`.
      size_t q = std::min(IdentifierEnd(s, start), k);
      const std::string_view type = s.substr(start, q - start);
      if (std::find(aliases.begin(), aliases.end(), type) != aliases.end()) {
        q = skip_space(q);
        if (q < k && s[q] == '<') {
          const size_t gt = MatchingAngle(s, q);
          q = gt == npos ? k : skip_space(gt + 1);
        }
        const size_t name_start = q;
        const size_t name_end = std::min(IdentifierEnd(s, q), k);
        if (name_end > name_start && skip_space(name_end) == k) {
          out.push_back(
              {start, name_end,
               std::string(s.substr(name_start, name_end - name_start))});
        }
      }
    }
    param_start = k + 1;
  }
  return out;
}

// An address-space qualifier of a member function or constructor
// (`complex_t(U x) constant : ...`, `T get() const threadgroup { ... }`)
// after the `)` at `i`: the qualifier's offset and the word.
struct MethodQualifier {
  size_t start = 0;
  std::string_view word;
};

std::optional<MethodQualifier> MethodQualifierAfter(std::string_view s,
                                                    size_t i) {
  auto skip_space = [&](size_t k) {
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    return k;
  };
  auto word_at = [&](size_t k, std::string_view w) {
    return s.compare(k, w.size(), w) == 0 &&
           (k + w.size() == s.size() || !IsIdentifierChar(s[k + w.size()]));
  };
  size_t k = skip_space(i + 1);
  if (word_at(k, "const")) k = skip_space(k + 5);
  for (std::string_view w : {"constant", "threadgroup", "thread", "device"}) {
    if (!word_at(k, w)) continue;
    const size_t next = skip_space(k + w.size());
    if (next < s.size() &&
        std::string_view("{:;=").find(s[next]) != std::string_view::npos) {
      return MethodQualifier{k, w};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The bodies of classes (struct, class, union), as [open brace, close
// brace], and whether a member of each is qualified `device`.
struct ClassBody {
  size_t open, close;
  std::string_view name;  // empty for an anonymous class
  bool has_device_member = false;
};

std::vector<ClassBody> ClassBodies(std::string_view s) {
  std::vector<ClassBody> out;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t skipped = SkipCommentOrLiteral(s, i);
    if (skipped != i) {
      i = skipped - 1;
      continue;
    }
    if (i > 0 && IsIdentifierChar(s[i - 1])) continue;
    size_t word = 0;
    for (std::string_view w : {"struct", "class", "union"}) {
      if (s.compare(i, w.size(), w) == 0 && i + w.size() < s.size() &&
          !IsIdentifierChar(s[i + w.size()])) {
        word = w.size();
      }
    }
    if (word == 0) continue;
    // The head up to its body (`struct S<1, T> : Base<T> {`, `struct
    // alignas(16) S {`), or what says this is no definition: a `;`, or a
    // `)`, `,` or `>` that closes a list the word was in (a parameter, a
    // template argument).
    size_t k = i + word;
    int angles = 0, parens = 0;
    for (; k < s.size(); ++k) {
      const char c = s[k];
      if (c == '{' || c == ';') break;
      if (c == '<') ++angles;
      if (c == '(') ++parens;
      if ((c == '>' && --angles < 0) || (c == ')' && --parens < 0) ||
          (c == ',' && angles == 0 && parens == 0)) {
        break;
      }
    }
    if (k >= s.size() || s[k] != '{') continue;
    const size_t close = std::min(MatchingClose(s, k), s.size());
    // The name: the last identifier of the head before any base list or
    // template arguments (`struct complex_t`, `struct BlockMMA<T, ...>`,
    // `struct alignas(8) S : Base`).
    size_t head_end = i + word;
    while (head_end < k && s[head_end] != ':' && s[head_end] != '<') {
      ++head_end;
    }
    size_t name_end = head_end;
    while (name_end > i + word && !IsIdentifierChar(s[name_end - 1])) {
      --name_end;
    }
    size_t name_start = name_end;
    while (name_start > i + word && IsIdentifierChar(s[name_start - 1])) {
      --name_start;
    }
    ClassBody body{k, close, s.substr(name_start, name_end - name_start)};
    for (size_t j = k; j < close; ++j) {
      if (s[j] != ')') continue;
      const std::optional<MethodQualifier> q = MethodQualifierAfter(s, j);
      if (q && q->word == "device") body.has_device_member = true;
    }
    out.push_back(body);
  }
  return out;
}

// The innermost class body holding `offset`, or nullptr.
const ClassBody* EnclosingClass(const std::vector<ClassBody>& classes,
                                size_t offset) {
  const ClassBody* innermost = nullptr;
  for (const ClassBody& c : classes) {
    if (c.open < offset && offset < c.close &&
        (innermost == nullptr || c.open > innermost->open)) {
      innermost = &c;
    }
  }
  return innermost;
}

// Whether the innermost open bracket is a `{` of a function's (or a
// block's) body: not a class's, a namespace's or an initializer's.
bool InFunctionBody(std::string_view s,
                    const std::vector<std::pair<char, size_t>>& open_brackets,
                    const std::vector<ClassBody>& classes) {
  if (open_brackets.empty() || open_brackets.back().first != '{') return false;
  const size_t open = open_brackets.back().second;
  for (const ClassBody& c : classes) {
    if (c.open == open) return false;
  }
  size_t p = open;
  while (p > 0 && std::isspace(static_cast<unsigned char>(s[p - 1]))) --p;
  // `) {`, `) const {`, `else {`, `do {`, `{ {`, `; {`, `: {`: code.
  if (p == 0) return false;
  const char c = s[p - 1];
  if (c == ')' || c == '{' || c == '}' || c == ';' || c == ':') return true;
  size_t w = p;
  while (w > 0 && IsIdentifierChar(s[w - 1])) --w;
  const std::string_view word = s.substr(w, p - w);
  return word == "else" || word == "do" || word == "const" ||
         word == "thread" || word == "device" || word == "constant" ||
         word == "threadgroup" || word == "noexcept" || word == "mutable";
}

// Whether the parameter list closed by the `)` at `i` is a constructor's:
// the name before its `(` is the enclosing class's.
bool ClosesConstructorParameters(std::string_view s, size_t i,
                                 const ClassBody* owner) {
  if (owner == nullptr || owner->name.empty()) return false;
  int depth = 0;
  size_t open = i;
  for (;; --open) {
    if (s[open] == ')') ++depth;
    if (s[open] == '(' && --depth == 0) break;
    if (open == owner->open) return false;
  }
  size_t end = open;
  while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) {
    --end;
  }
  size_t start = end;
  while (start > 0 && IsIdentifierChar(s[start - 1])) --start;
  return s.substr(start, end - start) == owner->name &&
         (start == 0 || s[start - 1] != '~');
}

// What a method qualifier becomes. `thread` on a constructor goes: clang
// makes temporaries and return values in no address space, which a
// __private constructor cannot make, and an unqualified constructor makes
// objects in every address space (the other qualifiers' overloads still
// win where they match); on other methods it stays __private, so `this`
// and the references they return are thread's, as in Metal. `constant` is
// `__global const` elsewhere (see __mtl_config), which would make a const
// constructor: it becomes __global, where the object of a `constant`
// declaration lives, unless the class also has `device` members (then
// they would collide, and __constant keeps them apart while the device
// overload serves: code whose device and constant overloads differ would
// see the device one for a `constant` object). `threadgroup` carries a
// variable attribute that has no place on a function: plain __local.
// `device` stays.
std::optional<std::string_view> MethodQualifierReplacement(
    std::string_view s, size_t close_paren, const MethodQualifier& q,
    const std::vector<ClassBody>& classes) {
  const ClassBody* owner = EnclosingClass(classes, q.start);
  if (q.word == "thread") {
    return ClosesConstructorParameters(s, close_paren, owner)
               ? std::optional<std::string_view>("")
               : std::nullopt;
  }
  if (q.word == "threadgroup") return "__local";
  if (q.word != "constant") return std::nullopt;
  return owner != nullptr && owner->has_device_member ? "__constant"
                                                      : "__global";
}

// The braced list opening at `open`: its closing `}`, how many elements it
// has at its own depth, whether it is empty, and whether a `;` at its depth
// says it is a block (a statement expression), not a list.
struct BracedList {
  size_t close = 0;
  int elements = 0;
  bool block = false;
};

std::optional<BracedList> ScanBracedList(std::string_view s, size_t open) {
  int depth = 0;
  BracedList list;
  bool empty = true;
  for (size_t k = open; k < s.size(); ++k) {
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) {
      k = skipped - 1;
      empty = false;
      continue;
    }
    const char c = s[k];
    if (c == '{' || c == '(' || c == '[') ++depth;
    if (c == '}' || c == ')' || c == ']') {
      if (--depth == 0) {
        if (c != '}') return std::nullopt;
        list.close = k;
        if (!empty) ++list.elements;
        return list;
      }
    }
    if (depth == 1 && c == ';') list.block = true;
    if (depth == 1 && c == ',') ++list.elements;
    if (k > open && !std::isspace(static_cast<unsigned char>(c))) {
      empty = false;
    }
  }
  return std::nullopt;
}

// A braced list in argument position, `f(a, {x, y, z})`, at the `{` at `i`
// (see __mtl_braced_list in the shims' metal_types): the offset of its
// closing `}`, or npos when the `{` is not one (a statement expression
// `({ ...; })`, an empty list, a list in a list).
size_t BracedArgumentEnd(
    std::string_view s, size_t i,
    const std::vector<std::pair<char, size_t>>& open_brackets) {
  if (open_brackets.empty() || open_brackets.back().first != '(') return npos;
  size_t p = i;
  while (p > 0 && std::isspace(static_cast<unsigned char>(s[p - 1]))) --p;
  if (p == 0 || (s[p - 1] != '(' && s[p - 1] != ',')) return npos;
  const std::optional<BracedList> list = ScanBracedList(s, i);
  if (!list || list->block || list->elements == 0) return npos;
  return list->close;
}

// `threadgroup float t[32] = {0};` (MLX's layer norm): Metal's compiler
// takes a braced initializer on a threadgroup variable, C++ for OpenCL
// refuses it (a pointer to threadgroup memory keeps its initializer).
// Threadgroup memory is written before it is read in such code (Metal does not
// run the initializer per threadgroup), so the initializer goes. For the word
// `threadgroup` at `i`: the [start, end) of ` = ...` to drop, or nullopt.
std::optional<std::pair<size_t, size_t>> ThreadgroupInitializer(
    std::string_view s, size_t i) {
  for (size_t k = i + 11; k < s.size(); ++k) {
    const char c = s[k];
    // A pointer or reference to threadgroup memory is a thread variable:
    // its initializer stays.
    if (c == ';' || c == ',' || c == '(' || c == ')' || c == '{' || c == '}' ||
        c == '*' || c == '&') {
      return std::nullopt;
    }
    if (c != '=') continue;
    // `operator+=`, `a == b`: no initializer.
    if ((k + 1 < s.size() && s[k + 1] == '=') ||
        std::string_view("+-*/%&|^<>!=").find(s[k - 1]) !=
            std::string_view::npos) {
      return std::nullopt;
    }
    size_t brace = k + 1;
    while (brace < s.size() &&
           std::isspace(static_cast<unsigned char>(s[brace]))) {
      ++brace;
    }
    if (brace >= s.size() || s[brace] != '{') return std::nullopt;
    size_t start = k;
    while (start > 0 && s[start - 1] == ' ') --start;
    const size_t close = MatchingClose(s, brace);
    if (close == std::string_view::npos) return std::nullopt;
    size_t semicolon = close + 1;
    while (semicolon < s.size() &&
           std::isspace(static_cast<unsigned char>(s[semicolon]))) {
      ++semicolon;
    }
    if (semicolon >= s.size() || s[semicolon] != ';') return std::nullopt;
    return std::make_pair(start, semicolon);
  }
  return std::nullopt;
}

// `uint4 ks = {a, b, c};`: Metal fills the elements a braced list leaves
// out of a vector with zeros, clang refuses the short list. For a vector
// type name at `i` (float4, packed_half3, ...) declaring a variable with a
// braced list of fewer elements: the offset of the list's `}` and how many
// zeros to add before it.
// A vector type name at `i` (float4, packed_half3, ...): its end and its
// element count.
std::optional<std::pair<size_t, int>> VectorTypeName(std::string_view s,
                                                     size_t i) {
  static constexpr std::string_view kScalars[] = {
      "bool", "char", "uchar", "short", "ushort", "int",
      "uint", "long", "ulong", "half",  "float",  "bfloat"};
  size_t k = i;
  if (s.compare(k, 7, "packed_") == 0) k += 7;
  size_t end = k;
  while (end < s.size() && IsIdentifierChar(s[end])) ++end;
  if (end - k < 2) return std::nullopt;
  const char digit = s[end - 1];
  if (digit < '2' || digit > '4') return std::nullopt;
  const std::string_view scalar = s.substr(k, end - 1 - k);
  if (std::find(std::begin(kScalars), std::end(kScalars), scalar) ==
      std::end(kScalars)) {
    return std::nullopt;
  }
  return std::make_pair(end, digit - '0');
}

// `short2 offset(a, b)` in a function body: Metal's compiler takes a
// vector's direct initialization from several values, clang refuses it.
// For a vector type name at `i` declaring a variable so: the offset of the
// `(` (where ` = short2` goes, making it `short2 offset = short2(a, b)`).
std::optional<size_t> VectorDirectInit(std::string_view s, size_t i) {
  const auto type = VectorTypeName(s, i);
  if (!type) return std::nullopt;
  size_t p = type->first;
  while (p < s.size() && s[p] == ' ') ++p;
  const size_t name = p;
  while (p < s.size() && IsIdentifierChar(s[p])) ++p;
  if (p == name || std::isdigit(static_cast<unsigned char>(s[name]))) {
    return std::nullopt;
  }
  while (p < s.size() && s[p] == ' ') ++p;
  if (p >= s.size() || s[p] != '(') return std::nullopt;
  return p;
}

std::optional<std::pair<size_t, int>> ShortVectorList(std::string_view s,
                                                      size_t i) {
  const auto type = VectorTypeName(s, i);
  if (!type) return std::nullopt;
  const int n = type->second;
  // NAME = {
  size_t p = type->first;
  auto skip_space = [&] {
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
  };
  skip_space();
  const size_t name = p;
  while (p < s.size() && IsIdentifierChar(s[p])) ++p;
  if (p == name || std::isdigit(static_cast<unsigned char>(s[name]))) {
    return std::nullopt;
  }
  skip_space();
  if (p >= s.size() || s[p] != '=') return std::nullopt;
  ++p;
  skip_space();
  if (p >= s.size() || s[p] != '{') return std::nullopt;
  const std::optional<BracedList> list = ScanBracedList(s, p);
  if (!list || list->block || list->elements == 0 || list->elements >= n) {
    return std::nullopt;
  }
  return std::make_pair(list->close, n - list->elements);
}

// `thread const short& lbk` (MLX's GEMM loop): a const reference in thread
// memory binds a temporary in Metal (temporaries live there); in C++ for
// OpenCL a temporary has no address space and only a generic reference
// binds it. For the word `thread` at `i` in a const reference's type
// (`thread const T&` or `const thread T&`): true, and the word goes, which
// makes the reference generic (it still binds what the thread one did).
bool ThreadInConstReference(std::string_view s, size_t i) {
  if (s.compare(i, 6, "thread") != 0 || (i > 0 && IsIdentifierChar(s[i - 1])) ||
      i + 6 >= s.size() || IsIdentifierChar(s[i + 6])) {
    return false;
  }
  size_t before = i;
  while (before > 0 && s[before - 1] == ' ') --before;
  const bool const_before = before >= 5 &&
                            s.compare(before - 5, 5, "const") == 0 &&
                            (before == 5 || !IsIdentifierChar(s[before - 6]));
  size_t k = i + 6;
  while (k < s.size() && s[k] == ' ') ++k;
  const bool const_after = s.compare(k, 5, "const") == 0 && k + 5 < s.size() &&
                           !IsIdentifierChar(s[k + 5]);
  if (!const_before && !const_after) return false;
  int angles = 0;
  for (; k < s.size(); ++k) {
    const char c = s[k];
    if (c == '<') ++angles;
    if (c == '>') --angles;
    if (angles > 0) continue;
    if (c == '&') return k + 1 >= s.size() || s[k + 1] != '&';
    if (c == ',' || c == ';' || c == ')' || c == '(' || c == '=' || c == '{' ||
        c == '*' || c == '[') {
      return false;
    }
  }
  return false;
}

// An unsuffixed floating literal at `i` (`0.5`, `1e-5`, `.25`, `0x1p-3`):
// its end. Metal has no double: such a literal is a float. clang's
// -cl-single-precision-constant makes it one with an implicit cast, which
// template instantiation drops (`0.5 * a` with `a` a vec<T, 2> then fails:
// "scalar operand type has greater rank"), so the front end writes the `f`.
std::optional<size_t> UnsuffixedFloatLiteral(std::string_view s, size_t i) {
  const auto digit = [&](size_t k) {
    return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]));
  };
  if (!digit(i) && !(s[i] == '.' && digit(i + 1))) return std::nullopt;
  if (i > 0 && (IsIdentifierChar(s[i - 1]) || s[i - 1] == '.')) {
    return std::nullopt;
  }
  const bool hex = s.compare(i, 2, "0x") == 0 || s.compare(i, 2, "0X") == 0;
  bool floating = false;
  size_t k = i;
  while (k < s.size()) {
    const char c = s[k];
    const bool exponent = hex ? (c == 'p' || c == 'P') : (c == 'e' || c == 'E');
    if (exponent) {
      floating = true;
      ++k;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      continue;
    }
    if (c == '.') floating = true;
    if (!IsIdentifierChar(c) && c != '.' && c != '\'') break;
    ++k;
  }
  if (!floating) return std::nullopt;
  const char last = s[k - 1];
  const bool suffixed = hex ? !std::isxdigit(static_cast<unsigned char>(last))
                            : !std::isdigit(static_cast<unsigned char>(last));
  if (suffixed && last != '.') return std::nullopt;
  if (hex && !std::isdigit(static_cast<unsigned char>(last))) {
    return std::nullopt;  // a hex float ends in its exponent's digits
  }
  return k;
}

// `complex_T(x, y)` at `i`, with `using complex_T = vec<T, 2>;` in scope
// (MLX's FFT): MSL's vector constructor through an alias, which clang
// would take for a scalar initialization; returns what replaces the name
// (the same __vec_make as for `vec<T, N>(` below).
std::optional<std::string> VecAliasConstructor(
    std::string_view s, size_t i, const std::vector<VecAlias>& aliases) {
  const size_t end = IdentifierEnd(s, i);
  size_t k = end;
  while (k < s.size() && s[k] == ' ') ++k;
  if (k >= s.size() || s[k] != '(') return std::nullopt;
  const std::string_view word = s.substr(i, end - i);
  const size_t before = SkipSpaceBack(s, i);
  if (before > 0 && (s[before - 1] == '.' || s[before - 1] == '>' ||
                     s[before - 1] == ':' || s[before - 1] == '~')) {
    return std::nullopt;
  }
  if (before >= 8 && s.compare(before - 8, 8, "operator") == 0) {
    return std::nullopt;
  }
  for (const VecAlias& a : aliases) {
    if (a.parameter.empty() && a.name == word && a.scope_open < i &&
        i < a.scope_close) {
      return "::metal::__vec_make<" + a.element + ", " + a.size + ">";
    }
  }
  return std::nullopt;
}

// `vec<T, N>(x)` at `i` (the word vec): MSL's vector constructor, which
// clang would compile as a bit cast of a vector; returns the offset of
// the word's end when the `<...>` is followed by `(` (the front end then
// spells it __vec_make, see the shims' metal_types).
std::optional<size_t> VecConstructorName(std::string_view s, size_t i) {
  if (s.compare(i, 3, "vec") != 0 || (i > 0 && IsIdentifierChar(s[i - 1])) ||
      i + 3 >= s.size() || IsIdentifierChar(s[i + 3])) {
    return std::nullopt;
  }
  // `operator vec<T, 2>()` names a conversion function.
  size_t before = i;
  while (before > 0 &&
         std::isspace(static_cast<unsigned char>(s[before - 1]))) {
    --before;
  }
  if (before >= 8 && s.compare(before - 8, 8, "operator") == 0) {
    return std::nullopt;
  }
  size_t k = i + 3;
  while (k < s.size() && s[k] == ' ') ++k;
  if (k >= s.size() || s[k] != '<') return std::nullopt;
  int angles = 0, parens = 0;
  for (; k < s.size(); ++k) {
    const char c = s[k];
    if (c == '(') ++parens;
    if (c == ')') --parens;
    if (c == ';' || c == '{' || c == '}') return std::nullopt;
    if (parens != 0) continue;
    if (c == '<') ++angles;
    if (c == '>' && --angles == 0) break;
  }
  if (k >= s.size()) return std::nullopt;
  ++k;
  while (k < s.size() && s[k] == ' ') ++k;
  if (k >= s.size() || s[k] != '(') return std::nullopt;
  return i + 3;
}

// One attribute: a name and the raw text of its arguments (maybe empty).
struct Attribute {
  std::string name;
  std::string arguments;
};

// Parses the inside of [[ ... ]]; false when it is not a plain list of
// (possibly argument-taking) identifiers.
bool ParseAttributeList(std::string_view body, std::vector<Attribute>& out) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < body.size() && std::isspace(static_cast<unsigned char>(body[i])))
      ++i;
  };
  while (true) {
    skip_space();
    const size_t start = i;
    while (i < body.size() && IsIdentifierChar(body[i])) ++i;
    if (i == start) return false;
    Attribute a{std::string(body.substr(start, i - start)), ""};
    skip_space();
    if (i < body.size() && body[i] == ':') return false;  // namespaced
    if (i < body.size() && body[i] == '(') {
      const size_t open = i;
      i = MatchingClose(body, open);
      if (i >= body.size()) return false;
      a.arguments = std::string(body.substr(open + 1, i - open - 1));
      ++i;
    }
    out.push_back(std::move(a));
    skip_space();
    if (i == body.size()) return true;
    if (body[i] != ',') return false;
    ++i;
  }
}

// Where the operand of a conditional that starts at `start` ends: the
// middle operand at the `:` that matches its `?` (npos if none), the last
// where the expression does (a `,`, `;` or closing bracket at its depth, or
// the `:` of an enclosing conditional).
size_t ConditionalOperandEnd(std::string_view s, size_t start, bool middle) {
  int depth = 0, pending = 0;
  for (size_t k = start; k < s.size(); ++k) {
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) {
      k = skipped - 1;
      continue;
    }
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth-- == 0) {
      return middle ? npos : k;
    }
    if (depth != 0) continue;
    if (c == ';' || (c == ',' && !middle)) return middle ? npos : k;
    if (c == '?') ++pending;
    if (c == ':' && k + 1 < s.size() && s[k + 1] == ':') {
      ++k;  // a qualified name
      continue;
    }
    if (c == ':' && pending-- == 0) return k;
  }
  return middle ? npos : s.size();
}

// The `?` of the conditional of whose second or third operand the
// operator at `op` is part, outside brackets (`c ? a * v : s`), or npos.
size_t EnclosingConditional(std::string_view s, size_t op) {
  int depth = 0;
  for (size_t k = op; k-- > 0;) {
    const char c = s[k];
    if (c == ')' || c == ']' || c == '}') ++depth;
    if (c == '(' || c == '[' || c == '{') {
      if (depth-- == 0) return npos;
    }
    if (depth != 0) continue;
    if (c == ';' || c == ',') return npos;
    if (c == '=' && k > 0 && std::strchr("=!<>", s[k - 1]) == nullptr &&
        (k + 1 >= s.size() || s[k + 1] != '=')) {
      return npos;  // an assignment, not a comparison
    }
    if (c == '?') return k;
  }
  return npos;
}

// The second and third operands of the conditional whose `?` is at `q`, as
// [start, end) pairs, or nullopt when they cannot be told.
std::optional<std::array<std::pair<size_t, size_t>, 2>> ConditionalOperands(
    std::string_view s, size_t q) {
  auto skip_space = [&](size_t k) {
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    return k;
  };
  auto trim = [&](size_t start, size_t end) {
    while (end > start &&
           std::isspace(static_cast<unsigned char>(s[end - 1]))) {
      --end;
    }
    return std::make_pair(start, end);
  };
  if (q >= s.size() || s[q] != '?') return std::nullopt;
  const size_t middle = skip_space(q + 1);
  const size_t colon = ConditionalOperandEnd(s, middle, /*middle=*/true);
  if (colon == npos) return std::nullopt;
  const size_t last = skip_space(colon + 1);
  const size_t end = ConditionalOperandEnd(s, last, /*middle=*/false);
  return std::array<std::pair<size_t, size_t>, 2>{trim(middle, colon),
                                                  trim(last, end)};
}

// The start of the postfix expression (`x`, `a.b[i]`, `f(y).z`, `0.5f`,
// `(a + b)`) that ends right before `end` (spaces skipped), or npos.
size_t PostfixExpressionStart(std::string_view s, size_t end) {
  // The `(` or `[` matching the `)` or `]` at `close`, or npos.
  auto matching_open = [&](size_t close) {
    int depth = 0;
    for (size_t k = close + 1; k-- > 0;) {
      if (s[k] == ')' || s[k] == ']' || s[k] == '}') ++depth;
      if ((s[k] == '(' || s[k] == '[' || s[k] == '{') && --depth == 0) {
        return k;
      }
    }
    return npos;
  };
  size_t k = SkipSpaceBack(s, end);
  size_t start = npos;
  while (k > 0) {
    const char c = s[k - 1];
    if (c == ')' || c == ']') {
      const size_t open = matching_open(k - 1);
      if (open == npos) return npos;
      start = open;
    } else if (IsIdentifierChar(c) || c == '.') {
      size_t b = k;
      // A word, or a number with its point and exponent sign.
      while (b > 0 && (IsIdentifierChar(s[b - 1]) || s[b - 1] == '.' ||
                       ((s[b - 1] == '+' || s[b - 1] == '-') && b >= 2 &&
                        (s[b - 2] == 'e' || s[b - 2] == 'E') && b >= 3 &&
                        std::isdigit(static_cast<unsigned char>(s[b - 3]))))) {
        --b;
      }
      start = b;
    } else {
      break;
    }
    // What joins it to the unit before: `.`, `->`, `::`, or a call or
    // subscript after a name.
    const size_t before = SkipSpaceBack(s, start);
    if (before >= 2 && (s.compare(before - 2, 2, "->") == 0 ||
                        s.compare(before - 2, 2, "::") == 0)) {
      k = SkipSpaceBack(s, before - 2);
      continue;
    }
    if ((s[start] == '(' || s[start] == '[') && before > 0 &&
        (IsIdentifierChar(s[before - 1]) || s[before - 1] == ')' ||
         s[before - 1] == ']' || s[before - 1] == '>')) {
      if (s[before - 1] == '>') break;  // a template's arguments: stop
      k = before;
      continue;
    }
    break;
  }
  return start;
}

// The precedence of the binary operator at `k` (higher binds tighter) and
// its length, or 0 for none of the arithmetic and bitwise ones.
std::pair<int, size_t> BinaryOperatorAt(std::string_view s, size_t k) {
  const char c = s[k];
  const char next = k + 1 < s.size() ? s[k + 1] : '\0';
  if (next == '=' && c != '=') return {0, 0};  // compound assignment, <=
  switch (c) {
    case '*':
    case '/':
    case '%':
      return {13, 1};
    case '+':
    case '-':
      return next == c || next == '>' ? std::make_pair(0, size_t{0})
                                      : std::make_pair(12, size_t{1});
    case '<':
    case '>':
      return next == c ? std::make_pair(11, size_t{2})
                       : std::make_pair(0, size_t{0});
    case '&':
      return next == '&' ? std::make_pair(0, size_t{0})
                         : std::make_pair(8, size_t{1});
    case '^':
      return {7, 1};
    case '|':
      return next == '|' ? std::make_pair(0, size_t{0})
                         : std::make_pair(6, size_t{1});
    default:
      return {0, 0};
  }
}

// The start of the left operand of the binary operator at `op`: postfix
// expressions joined by operators that bind at least as tightly, with their
// unary prefixes (`-a * b + c` at the `+`: `-a * b`), or npos.
size_t LeftOperandStart(std::string_view s, size_t op) {
  const int precedence = BinaryOperatorAt(s, op).first;
  auto ends_operand = [&](size_t k) {  // is s[k - 1] the end of an operand?
    return k > 0 && (IsIdentifierChar(s[k - 1]) || s[k - 1] == ')' ||
                     s[k - 1] == ']' || s[k - 1] == '.');
  };
  size_t end = op;
  for (;;) {
    const size_t start = PostfixExpressionStart(s, end);
    if (start == npos) return npos;
    // A keyword before it (`return x * v`) is no operand.
    size_t k = SkipSpaceBack(s, start);
    size_t unary = start;
    while (k > 0 && (s[k - 1] == '-' || s[k - 1] == '+' || s[k - 1] == '!' ||
                     s[k - 1] == '~')) {
      const size_t before = SkipSpaceBack(s, k - 1);
      if (ends_operand(before)) {
        size_t w = before;
        while (w > 0 && IsIdentifierChar(s[w - 1])) --w;
        const std::string_view word = s.substr(w, before - w);
        if (word != "return" && word != "case" && word != "else") break;
      }
      unary = k - 1;  // a prefix: part of this operand
      k = before;
    }
    if (unary != start) return unary;
    // The operator before, if it binds at least as tightly.
    bool joined = false;
    for (size_t length : {size_t{2}, size_t{1}}) {
      if (joined || k < length) continue;
      const auto [p, l] = BinaryOperatorAt(s, k - length);
      if (l == length && p >= precedence &&
          ends_operand(SkipSpaceBack(s, k - l))) {
        end = k - l;
        joined = true;
      }
    }
    if (!joined) return start;
  }
}

// The operand to wrap for the mixed-rank operator at `op` (see
// RetrySites): [start, end).
std::optional<std::pair<size_t, size_t>> MixedOperand(std::string_view s,
                                                      size_t op) {
  if (op + 1 >= s.size()) return std::nullopt;
  if (s[op + 1] == '=') {
    const size_t start = SkipSpace(s, op + 2);
    const size_t end = std::max(
        start,
        SkipSpaceBack(s, ConditionalOperandEnd(s, start, /*middle=*/false)));
    if (start >= end) return std::nullopt;
    return std::make_pair(start, end);
  }
  const size_t start = LeftOperandStart(s, op);
  if (start == npos) return std::nullopt;
  return std::make_pair(start, std::max(start, SkipSpaceBack(s, op)));
}

// What to insert where so that the cast at `at` (RetrySites::vector_casts)
// converts through `wrapper` (__mtl_vector_cast): `(T)x` ->
// `(T)(__mtl_vector_cast<T>)x` (the inner cast takes the same operand, by
// precedence), `T(x)` -> `T(__mtl_vector_cast<T>(x))`, and the same inside
// static_cast's parentheses; or that the constructor `T(a, b)` at `at`
// (vector_constructors) builds through __mtl_vector_make. Nothing for
// anything else.
std::vector<std::pair<size_t, std::string>> CastInsertions(
    std::string_view s, size_t at, std::string_view wrapper) {
  const size_t k = SkipSpace(s, at);
  if (k >= s.size()) return {};
  if (s[k] == '(' && wrapper != "__mtl_vector_make") {
    const size_t close = MatchingClose(s, k);
    if (close == npos) return {};
    const std::string_view type = Trim(s.substr(k + 1, close - k - 1));
    if (type.empty()) return {};
    return {{close + 1,
             "(" + std::string(wrapper) + "<" + std::string(type) + ">)"}};
  }
  // A type's name, maybe qualified and with template arguments, then `(`.
  size_t end = k;
  for (size_t part = k;;) {
    end = IdentifierEnd(s, part);
    if (end == part) return {};
    size_t next = SkipSpace(s, end);
    if (next < s.size() && s[next] == '<') {
      const size_t gt = MatchingAngle(s, next);
      if (gt == npos) return {};
      end = gt + 1;
      next = SkipSpace(s, end);
    }
    if (s.compare(next, 2, "::") != 0) break;
    part = SkipSpace(s, next + 2);
  }
  const size_t open = SkipSpace(s, end);
  if (open >= s.size() || s[open] != '(') return {};
  const size_t close = MatchingClose(s, open);
  if (close == npos) return {};
  std::string_view type = Trim(s.substr(k, end - k));
  if (WordAt(s, k, "static_cast")) {
    const size_t lt = SkipSpace(s, k + 11);
    if (lt >= end || s[lt] != '<') return {};
    type = Trim(s.substr(lt + 1, end - 1 - (lt + 1)));
  }
  return {{open + 1, std::string(wrapper) + "<" + std::string(type) + ">("},
          {close, ")"}};
}

// Whether the parenthesized expression at `open` has no comparison or
// logical operator (nor `->`, `<<` or `>>`, which look alike) outside the
// brackets inside it: its value is no vector mask.
bool WithoutComparison(std::string_view s, size_t open) {
  return MatchingClose(s, open) != npos &&
         FindAtTopLevel(s, open, [&](size_t k) {
           const char c = s[k];
           return c == '<' || c == '>' || c == '!' ||
                  s.compare(k, 2, "==") == 0 || s.compare(k, 2, "&&") == 0 ||
                  s.compare(k, 2, "||") == 0;
         }) == npos;
}

// Whether the parentheses at `open` hold one argument (no comma outside
// the brackets inside them) and not none.
bool OneArgument(std::string_view s, size_t open) {
  const size_t close = MatchingClose(s, open);
  return close != npos && !Trim(s.substr(open + 1, close - open - 1)).empty() &&
         FindAtTopLevel(s, open, [&](size_t k) { return s[k] == ','; }) == npos;
}

// The outermost brace blocks (not namespaces' nor `extern "C"`'s: the
// bodies of functions and classes at namespace scope) that hold one of
// the offsets `at`, as [start, end), in order.
std::vector<std::pair<size_t, size_t>> BlocksAround(
    std::string_view s, const std::vector<size_t>& at) {
  std::vector<std::pair<size_t, size_t>> blocks;
  std::vector<bool> transparent;  // per open brace: a namespace's
  int depth = 0;
  size_t open = 0;
  FindInCode(s, 0, [&](size_t k) {
    if (s[k] == '{') {
      const size_t before = SkipSpaceBack(s, k);
      size_t word = before;
      while (word > 0 &&
             (IsIdentifierChar(s[word - 1]) || s[word - 1] == ':')) {
        --word;
      }
      size_t previous = SkipSpaceBack(s, word);
      while (previous > 0 && IsIdentifierChar(s[previous - 1])) --previous;
      const bool ns = WordAt(s, word, "namespace") ||
                      WordAt(s, previous, "namespace") ||
                      (before > 0 && s[before - 1] == '"');  // extern "C"
      transparent.push_back(ns);
      if (!ns && depth++ == 0) open = k;
    } else if (s[k] == '}' && !transparent.empty()) {
      const bool ns = transparent.back();
      transparent.pop_back();
      if (!ns && --depth == 0) blocks.emplace_back(open, k + 1);
    }
    return false;
  });
  std::vector<std::pair<size_t, size_t>> around;
  for (const auto& block : blocks) {
    if (std::any_of(at.begin(), at.end(), [&](size_t a) {
          return a >= block.first && a < block.second;
        })) {
      around.push_back(block);
    }
  }
  return around;
}

// Clang reports one cast that converts vectors per statement of a template
// instantiation (it stops instantiating the statement at the first error),
// so a statement of four such casts would take four compiles. Every C-style
// cast spelled with the type of a found one is a cast to that type (and
// every functional cast of one argument through a found one's single
// identifier, a template's type or a typedef), and
// converting by value is what Metal does with any cast to a vector (the
// wrapper casts scalars and classes plainly): the sites of all of them, at
// their `(`. Those of a parenthesized operand with a comparison or logical
// operator outside its inner brackets stay for clang, since a cast of a
// vector comparison is a mask cast (KernelCollector).
std::vector<size_t> SameTypeCasts(std::string_view s,
                                  const std::vector<size_t>& found,
                                  const std::vector<size_t>& other_sites) {
  std::set<std::string_view> types, functional;
  for (size_t at : found) {
    const size_t k = SkipSpace(s, at);
    if (k >= s.size()) continue;
    if (s[k] != '(') {
      // `T(x)` with T one identifier.
      const size_t end = IdentifierEnd(s, k);
      if (end > k && SkipSpace(s, end) < s.size() &&
          s[SkipSpace(s, end)] == '(') {
        functional.insert(s.substr(k, end - k));
      }
      continue;
    }
    const size_t close = s.find(')', k);
    if (close == npos) continue;
    const std::string_view type = Trim(s.substr(k + 1, close - k - 1));
    if (!type.empty() && type.find('(') == npos) types.insert(type);
  }
  std::vector<size_t> sites;
  if (types.empty() && functional.empty()) return sites;
  constexpr std::string_view kNotOperands[] = {
      "const",       "volatile", "constant", "device", "thread",
      "threadgroup", "noexcept", "override", "final",  "requires"};
  // T(x) of one argument, not a member or qualified name's call: through
  // a template's type or a typedef, so all of them, in the whole file.
  if (!functional.empty()) {
    FindInCode(s, 0, [&](size_t k) {
      if (!IsIdentifierChar(s[k]) || (k > 0 && IsIdentifierChar(s[k - 1]))) {
        return false;
      }
      const size_t end = IdentifierEnd(s, k);
      const size_t open = SkipSpace(s, end);
      const size_t before = SkipSpaceBack(s, k);
      const char prev = before > 0 ? s[before - 1] : ';';
      if (open < s.size() && s[open] == '(' && prev != '.' && prev != ':' &&
          prev != '>' && functional.count(s.substr(k, end - k)) != 0 &&
          OneArgument(s, open) && WithoutComparison(s, open)) {
        sites.push_back(k);
      }
      return false;
    });
  }
  if (types.empty()) return sites;
  auto look = [&](size_t k) {
    if (s[k] != '(') return false;
    const size_t before = SkipSpaceBack(s, k);
    if (before > 0 &&
        (IsIdentifierChar(s[before - 1]) || s[before - 1] == '>' ||
         s[before - 1] == ']' || s[before - 1] == ')')) {
      return false;  // a call, sizeof(T), f<T>(T) or a declarator
    }
    const size_t close = s.find(')', k);
    if (close == npos || close - k > 64) return false;
    const std::string_view type = Trim(s.substr(k + 1, close - k - 1));
    if (types.count(type) == 0) return false;
    const size_t next = SkipSpace(s, close + 1);
    if (next < s.size() && s[next] == '(') {
      if (!WithoutComparison(s, next)) return false;
    } else if (next >= s.size() || !(IsIdentifierChar(s[next]) ||
                                     s[next] == '*' || s[next] == '-')) {
      return false;
    }
    const size_t word_end = IdentifierEnd(s, next);
    for (std::string_view word : kNotOperands) {
      if (s.substr(next, word_end - next) == word) return false;
    }
    sites.push_back(k);
    return false;
  };
  // C-style casts only in the functions (or classes) of the sites found
  // (an error can hide a cast behind it: `(float4)(c ? s*v : 0.0f)`): a
  // cast of the same spelling elsewhere was compiled without complaint,
  // and wrapping every one costs compile time (bfloat's: 4 s of
  // ggml-metal.metal).
  std::vector<size_t> all = found;
  all.insert(all.end(), other_sites.begin(), other_sites.end());
  for (const auto& [start, end] : BlocksAround(s, all)) {
    FindInCode(s, start, [&](size_t k) { return k >= end || look(k); });
  }
  return sites;
}

// Whether `s` has a string literal in its code: outside attributes' `[[
// ]]`, preprocessor lines (line markers, pragmas), static_assert and
// `extern "C"`. Only then may a `constant char*` take one.
bool HasCodeStringLiteral(std::string_view s) {
  for (size_t k = 0; k < s.size(); ++k) {
    if ((k == 0 || s[k - 1] == '\n') && s[SkipSpace(s, k)] == '#') {
      k = s.find('\n', k);
      if (k == npos) return false;
      continue;
    }
    if (s.compare(k, 2, "[[") == 0) {
      k = s.find("]]", k);
      if (k == npos) return false;
      continue;
    }
    if (IsIdentifierChar(s[k]) && (k == 0 || !IsIdentifierChar(s[k - 1]))) {
      const size_t end = IdentifierEnd(s, k);
      const std::string_view word = s.substr(k, end - k);
      if (word == "static_assert" || word == "_Static_assert") {
        const size_t open = SkipSpace(s, end);
        const size_t close =
            open < s.size() && s[open] == '(' ? MatchingClose(s, open) : npos;
        if (close == npos) return false;
        k = close;
      } else if (word == "extern") {
        const size_t next = SkipSpace(s, end);
        if (next < s.size() && s[next] == '"') {
          k = SkipCommentOrLiteral(s, next) - 1;
          continue;
        }
        k = end - 1;
      } else {
        k = end - 1;
      }
      continue;
    }
    if (s[k] == '"') return true;
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) k = skipped - 1;
  }
  return false;
}

// Whether the `constant char*` at `i` (its `*` at `star`) is where a string
// literal may go: a parameter, or a variable that one initializes; not a
// cast (`(constant char*)p`), a kernel's buffer (`[[buffer(n)]]` after its
// name), nor part of an explicit instantiation or specialization (`template
// char f<char>(constant char*)`, `template <> ...`), which must match what
// `constant T*` is with T = char.
bool TakesStringLiterals(std::string_view s, size_t i, size_t star) {
  const size_t after = SkipSpace(s, star + 1);
  const size_t before = SkipSpaceBack(s, i);
  if (after < s.size() && s[after] == ')' && before > 0 &&
      s[before - 1] == '(') {
    const size_t operand = SkipSpace(s, after + 1);
    if (operand < s.size() &&
        (IsIdentifierChar(s[operand]) || s[operand] == '(') &&
        !WordAt(s, operand, "const") && !WordAt(s, operand, "constant")) {
      return false;  // a cast
    }
  }
  const size_t name_end = IdentifierEnd(s, after);
  const size_t next = SkipSpace(s, name_end);
  if (name_end > after && s.compare(next, 2, "[[") == 0) return false;
  // A variable only where a string literal initializes it (an array of
  // them, `constant char* names[] = {...}`, is one).
  if (name_end > after && next < s.size() && s[next] == '=' &&
      s.compare(next, 2, "==") != 0) {
    const size_t value = SkipSpace(s, next + 1);
    if (value >= s.size() || s[value] != '"') return false;
  }
  // The statement's start: after the last `;`, `{` or `}` before it.
  size_t start = i;
  while (start > 0 && s[start - 1] != ';' && s[start - 1] != '{' &&
         s[start - 1] != '}') {
    --start;
  }
  start = SkipSpace(s, start);
  if (WordAt(s, start, "template")) {
    const size_t next = SkipSpace(s, start + 8);
    if (next >= s.size() || s[next] != '<') return false;
    if (s[SkipSpace(s, next + 1)] == '>') return false;
  }
  return true;
}

// The concatenation of the string literals that make up `text` (`"a" "b"`,
// as the preprocessor leaves `"v_" #op`), or nullopt for anything else.
std::optional<std::string> StringLiterals(std::string_view text) {
  std::string value;
  size_t k = 0;
  bool any = false;
  while (true) {
    k = SkipSpace(text, k);
    if (k == text.size()) break;
    if (text[k] != '"') return std::nullopt;
    const size_t end = SkipCommentOrLiteral(text, k);
    if (end < k + 2 || text[end - 1] != '"') return std::nullopt;
    const std::string_view body = text.substr(k + 1, end - k - 2);
    if (body.find('\\') != std::string_view::npos) return std::nullopt;
    value.append(body);
    any = true;
    k = end;
  }
  return any ? std::optional<std::string>(value) : std::nullopt;
}

// `template [[host_name("x")]] ...;` with the `[[` at `i` and its `]]` at
// `close`, when "x" is not among `only_kernels` (given): the statement's
// [start, end) and "x".
struct SkippedStatement {
  size_t start, end;
  std::string host_name;
};
std::optional<SkippedStatement> SkippedInstantiation(
    std::string_view s, size_t i, size_t close,
    const std::vector<Attribute>& attributes,
    const std::vector<std::string>& only_kernels) {
  if (only_kernels.empty() || attributes.size() != 1 ||
      attributes[0].name != "host_name") {
    return std::nullopt;
  }
  const size_t b = SkipSpaceBack(s, i);
  if (b < 8 || !WordAt(s, b - 8, "template")) return std::nullopt;
  std::optional<std::string> name = StringLiterals(attributes[0].arguments);
  if (!name || std::find(only_kernels.begin(), only_kernels.end(), *name) !=
                   only_kernels.end()) {
    return std::nullopt;
  }
  // Its `;`, at its own depth (a bracket it did not open: none).
  int depth = 0;
  const size_t end = FindInCode(s, close + 2, [&](size_t k) {
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') return --depth < 0;
    return c == ';' && depth == 0;
  });
  if (end == npos || s[end] != ';') return std::nullopt;
  return SkippedStatement{b - 8, end + 1, std::move(*name)};
}

}  // namespace

bool IsMetalAttribute(std::string_view name) {
  return std::find(kStandardAttributes.begin(), kStandardAttributes.end(),
                   name) == kStandardAttributes.end();
}

size_t RewrittenSource::OriginalOffset(size_t rewritten) const {
  auto it = std::upper_bound(
      anchors.begin(), anchors.end(), rewritten,
      [](size_t v, const std::pair<size_t, size_t>& a) { return v < a.first; });
  if (it == anchors.begin()) return rewritten;
  --it;
  return it->second + (rewritten - it->first);
}

namespace {

// What the rewrite of a piece of the source (a template's other forms, a
// conditional's other way, rewritten apart from it) knows of the whole.
struct WholeSource {
  std::vector<std::string> pointer_aliases;  // function pointer type aliases
  bool string_literals = false;              // HasCodeStringLiteral
};
WholeSource Survey(std::string_view s) {
  return {FunctionPointerAliases(s), HasCodeStringLiteral(s)};
}

RewrittenSource Rewrite(std::string_view s, const RetrySites& retry,
                        const WholeSource& whole,
                        const std::vector<std::string>& only_kernels = {}) {
  const std::vector<std::string>& pointer_aliases = whole.pointer_aliases;
  RewrittenSource out;
  // Text to insert before an offset: __mtl_cond_arm<...>( and ) around the
  // operands of the conditionals named, __mtl_mixed( and ) around an
  // operand of the operators named.
  std::map<size_t, std::string> insertions;
  // A mixed operator gives a vector: in a way of a conditional, the
  // conditional is mixed too where its other way is a scalar (llama.cpp's
  // `pmask ? slope*pmask[i] : 0.0f`), and __mtl_mixed_arm leaves a vector
  // as it is. Both go in one round, as clang would name the conditional
  // only after the operator is rewritten.
  std::vector<size_t> mixed = retry.mixed_operators;
  for (size_t op : retry.mixed_operators) {
    const size_t q = s[op] == '?' ? npos : EnclosingConditional(s, op);
    if (q != npos &&
        std::find(retry.conditionals.begin(), retry.conditionals.end(), q) ==
            retry.conditionals.end()) {
      mixed.push_back(q);
    }
  }
  std::sort(mixed.begin(), mixed.end());
  mixed.erase(std::unique(mixed.begin(), mixed.end()), mixed.end());
  for (size_t op : mixed) {
    if (s[op] == '?') {
      // `c ? v : 0.0f` with v a half4: each way in __mtl_mixed_arm(...).
      if (const auto operands = ConditionalOperands(s, op)) {
        for (const auto& [start, end] : *operands) {
          if (start >= end) continue;
          insertions[start] += "__mtl_mixed_arm(";
          insertions[end] = ")" + insertions[end];
        }
      }
      continue;
    }
    if (const auto operand = MixedOperand(s, op)) {
      insertions[operand->first] += "__mtl_mixed(";
      insertions[operand->second] = ")" + insertions[operand->second];
    }
  }
  for (size_t open : retry.short_lists) {
    // Only where an expression may stand (not `float4 v{0.f}`).
    const size_t before = SkipSpaceBack(s, open);
    const char c = before > 0 ? s[before - 1] : ';';
    const bool returned = before >= 6 && WordAt(s, before - 6, "return");
    if (open >= s.size() || s[open] != '{' ||
        !(c == '=' || c == '(' || c == ',' || c == '{' || returned)) {
      continue;
    }
    insertions[open] += "__mtl_short_list";
  }
  const std::vector<size_t> vector_casts = [&] {
    std::vector<size_t> others = retry.mixed_operators;
    others.insert(others.end(), retry.conditionals.begin(),
                  retry.conditionals.end());
    std::vector<size_t> sites = SameTypeCasts(s, retry.vector_casts, others);
    for (size_t at : retry.vector_casts) {
      if (std::find(sites.begin(), sites.end(), SkipSpace(s, at)) ==
          sites.end()) {
        sites.push_back(at);
      }
    }
    return sites;
  }();
  for (const auto& [sites, wrapper] :
       {std::pair(&vector_casts, "__mtl_vector_cast"),
        std::pair(&retry.mask_casts, "__mtl_mask_cast"),
        std::pair(&retry.vector_constructors, "__mtl_vector_make")}) {
    for (size_t cast : *sites) {
      for (const auto& [offset, text] : CastInsertions(s, cast, wrapper)) {
        if (text == ")") {
          insertions[offset] = text + insertions[offset];
        } else {
          insertions[offset] += text;
        }
      }
    }
  }
  for (size_t q : retry.conditionals) {
    const auto operands = ConditionalOperands(s, q);
    if (!operands) continue;
    for (int way = 0; way < 2; ++way) {
      const auto [start, end] = (*operands)[way];
      const auto [other_start, other_end] = (*operands)[1 - way];
      if (start >= end || other_start >= other_end) continue;
      const std::string other =
          Rewrite(s.substr(other_start, other_end - other_start), {}, whole)
              .text;
      insertions[start] += "__mtl_cond_arm<decltype((" + other + "))>(";
      insertions[end] = ")" + insertions[end];
    }
  }
  // Templates that deduce through vec<T, N>: their other forms go right
  // after them, rewritten as everything else is.
  const std::vector<VecAlias> vec_aliases = FindVecAliases(s);
  const VecDeductionEdits vec_edits = FindVecDeductions(s, vec_aliases);
  for (const VecDeductionEdits::Copy& copy : vec_edits.copies) {
    insertions[copy.offset] += Rewrite(copy.text, {}, whole).text;
  }
  size_t next_vec = 0;  // the next of vec_edits.replacements
  out.text.reserve(s.size() + s.size() / 8);
  const std::vector<ClassBody> classes = ClassBodies(s);
  // ( [ { outside comments and literals, and where each opened.
  std::vector<std::pair<char, size_t>> open_brackets;
  std::vector<size_t> braced_ends;  // the `}` of each braced argument open
  // The `}` of each short vector list open, and the zeros it needs.
  std::vector<std::pair<size_t, int>> short_lists;
  size_t copied = 0;  // original offset up to which text is copied
  auto copy_to = [&](size_t end) {
    while (end > copied) {
      // Up to the next insertion point in the range, then its text.
      auto next = insertions.upper_bound(copied);
      const size_t stop =
          next != insertions.end() && next->first < end ? next->first : end;
      if (auto at = insertions.find(copied);
          at != insertions.end() && !at->second.empty()) {
        out.anchors.emplace_back(out.text.size(), copied);
        out.text += at->second;
        at->second.clear();
      }
      out.anchors.emplace_back(out.text.size(), copied);
      out.text.append(s.substr(copied, stop - copied));
      copied = stop;
    }
  };
  size_t i = 0;
  while (i < s.size()) {
    const size_t skipped = SkipCommentOrLiteral(s, i);
    if (skipped != i) {
      i = skipped;
      continue;
    }
    while (next_vec < vec_edits.replacements.size() &&
           vec_edits.replacements[next_vec].start < i) {
      ++next_vec;
    }
    if (next_vec < vec_edits.replacements.size() &&
        vec_edits.replacements[next_vec].start == i) {
      const VecDeductionEdits::Replacement& r =
          vec_edits.replacements[next_vec++];
      copy_to(i);
      out.anchors.emplace_back(out.text.size(), i);
      out.text += r.text;
      copied = r.end;
      i = r.end;
      continue;
    }
    if (const std::optional<size_t> end = UnsuffixedFloatLiteral(s, i)) {
      copy_to(*end);
      out.anchors.emplace_back(out.text.size(), *end);
      out.text += 'f';
      i = *end;
      continue;
    }
    if (s[i] == 't') {
      const std::vector<FunctionPointerParameter> params =
          FunctionPointerParameters(s, i, pointer_aliases);
      for (const FunctionPointerParameter& p : params) {
        copy_to(p.start);
        out.anchors.emplace_back(out.text.size(), p.start);
        if (p.star == npos) {
          out.text += "auto " + p.name;
        } else {
          std::string reference(s.substr(p.start, p.end - p.start));
          reference[p.star - p.start] = '&';
          out.text += Rewrite(reference, {}, whole).text;
        }
        copied = p.end;
      }
      if (!params.empty()) {
        i = params.back().end;
        continue;
      }
    }
    if (IsIdentifierChar(s[i]) && (i == 0 || !IsIdentifierChar(s[i - 1]))) {
      if (ThreadInConstReference(s, i)) {
        copy_to(i);
        copied = i + 6;
      }
      if (const std::optional<std::string> make =
              VecAliasConstructor(s, i, vec_aliases)) {
        copy_to(i);
        out.anchors.emplace_back(out.text.size(), i);
        out.text += *make;
        copied = IdentifierEnd(s, i);
      }
      if (const std::optional<size_t> word_end = VecConstructorName(s, i)) {
        copy_to(i);
        out.anchors.emplace_back(out.text.size(), i);
        out.text += "__vec_make";
        copied = *word_end;
      }
      if (s.compare(i, 11, "threadgroup") == 0 && i + 11 < s.size() &&
          !IsIdentifierChar(s[i + 11])) {
        if (const auto drop = ThreadgroupInitializer(s, i)) {
          copy_to(drop->first);
          copied = drop->second;  // the `;` stays
        }
      } else if (const auto list = ShortVectorList(s, i)) {
        short_lists.emplace_back(list->first, list->second);
      } else if (const auto paren = VectorDirectInit(s, i);
                 paren && InFunctionBody(s, open_brackets, classes)) {
        const size_t type_end = VectorTypeName(s, i)->first;
        copy_to(*paren);
        out.anchors.emplace_back(out.text.size(), *paren);
        out.text += " = " + std::string(s.substr(i, type_end - i));
      }
    }
    if (s[i] == '}' && !short_lists.empty() && short_lists.back().first == i) {
      copy_to(i);
      out.anchors.emplace_back(out.text.size(), i);
      for (int z = 0; z < short_lists.back().second; ++z) out.text += ", 0";
      short_lists.pop_back();
    }
    if (s[i] == '{') {
      const size_t end = BracedArgumentEnd(s, i, open_brackets);
      if (end != npos) {
        copy_to(i);
        out.anchors.emplace_back(out.text.size(), i);
        out.text += "__mtl_braced_list(";
        copied = i + 1;
        braced_ends.push_back(end);
      }
    }
    if (s[i] == '}' && !braced_ends.empty() && braced_ends.back() == i) {
      braced_ends.pop_back();
      copy_to(i);
      out.anchors.emplace_back(out.text.size(), i);
      out.text += ")";
      copied = i + 1;
    }
    // Parentheses and braces here, square brackets below (a Metal
    // attribute's [[ ]] are skipped whole).
    if (s[i] == '(' || s[i] == '{') open_brackets.emplace_back(s[i], i);
    if ((s[i] == ')' || s[i] == '}') && !open_brackets.empty()) {
      open_brackets.pop_back();
    }
    if (s[i] == ')') {
      const std::optional<MethodQualifier> q = MethodQualifierAfter(s, i);
      const std::optional<std::string_view> replacement =
          q ? MethodQualifierReplacement(s, i, *q, classes) : std::nullopt;
      if (replacement) {
        copy_to(q->start);
        out.anchors.emplace_back(out.text.size(), q->start);
        out.text += *replacement;
        copied = q->start + q->word.size();
        i = copied;
        continue;
      }
    }
    // `constant char*`: Metal's type of a string literal, which C++ for
    // OpenCL puts in __constant (not the __global that `constant` is
    // elsewhere), where a file has string literals and one may go there
    // (TakesStringLiterals); elsewhere what `constant T*` is with T = char.
    if (whole.string_literals && s[i] == 'c' &&
        (i == 0 || !IsIdentifierChar(s[i - 1])) &&
        s.compare(i, 9, "constant ") == 0) {
      size_t k = i + 9;
      while (k < s.size() && s[k] == ' ') ++k;
      if (s.compare(k, 4, "char") == 0 && k + 4 < s.size() &&
          !IsIdentifierChar(s[k + 4])) {
        size_t star = k + 4;
        while (star < s.size() && s[star] == ' ') ++star;
        if (star < s.size() && s[star] == '*' &&
            TakesStringLiterals(s, i, star)) {
          copy_to(i);
          out.anchors.emplace_back(out.text.size(), i);
          out.text += "const __constant";
          copied = i + 8;
          i = copied;
          continue;
        }
      }
    }
    if (s.compare(i, 2, "[[") != 0) {
      if (s[i] == '[') open_brackets.emplace_back('[', i);
      if (s[i] == ']' && !open_brackets.empty()) open_brackets.pop_back();
      ++i;
      continue;
    }
    // Find the matching "]]" (attribute arguments hold no brackets).
    const size_t close = s.find("]]", i + 2);
    if (close == std::string_view::npos) break;
    const std::string_view body = s.substr(i + 2, close - i - 2);
    std::vector<Attribute> attributes;
    if (body.find('\n') != std::string_view::npos ||
        !ParseAttributeList(body, attributes) ||
        !std::all_of(
            attributes.begin(), attributes.end(),
            [](const Attribute& a) { return IsMetalAttribute(a.name); })) {
      open_brackets.emplace_back('[', i);
      open_brackets.emplace_back('[', i + 1);
      i += 2;
      continue;
    }
    // An explicit instantiation of a kernel not asked for: left out, its
    // lines kept.
    if (const auto skipped =
            SkippedInstantiation(s, i, close, attributes, only_kernels)) {
      copy_to(skipped->start);
      out.anchors.emplace_back(out.text.size(), skipped->start);
      out.text.append(
          static_cast<size_t>(std::count(
              s.begin() + static_cast<std::ptrdiff_t>(skipped->start),
              s.begin() + static_cast<std::ptrdiff_t>(skipped->end), '\n')),
          '\n');
      out.skipped_kernels.push_back(skipped->host_name);
      copied = skipped->end;
      i = skipped->end;
      continue;
    }
    copy_to(i);
    // A function constant: its value comes from a macro (see the header).
    if (attributes.size() == 1 && attributes[0].name == "function_constant") {
      size_t name_end = i;
      while (name_end > 0 &&
             std::isspace(static_cast<unsigned char>(s[name_end - 1]))) {
        --name_end;
      }
      size_t name_start = name_end;
      while (name_start > 0 && IsIdentifierChar(s[name_start - 1])) {
        --name_start;
      }
      // The index after preprocessing: `FC_UNARY + 1` is `1200 + 1`.
      const std::optional<long long> value =
          IntegerConstant(attributes[0].arguments);
      const long long index = value.value_or(-1);
      if (name_start < name_end && index >= 0 && index <= INT32_MAX) {
        out.function_constants.push_back(
            {std::string(s.substr(name_start, name_end - name_start)),
             static_cast<int>(index)});
        out.anchors.emplace_back(out.text.size(), i);
        out.text += "= __MTLEMU_FC_" + std::to_string(index);
        copied = close + 2;
        i = close + 2;
        continue;
      }
    }
    // GNU spelling: unlike [[...]] it is also allowed where MSL puts
    // [[host_name]], after `template` in an explicit instantiation. A space
    // keeps `uint i[[...]]` from becoming one identifier.
    std::string replacement = i > 0 && IsIdentifierChar(s[i - 1])
                                  ? " __attribute__(("
                                  : "__attribute__((";
    for (size_t k = 0; k < attributes.size(); ++k) {
      if (k) replacement += ", ";
      replacement += "annotate(\"metal." + attributes[k].name + "\"";
      if (!attributes[k].arguments.empty()) {
        replacement += ", " + attributes[k].arguments;
      }
      replacement += ")";
    }
    replacement += "))";
    out.anchors.emplace_back(out.text.size(), i);
    out.text += replacement;
    copied = close + 2;
    i = close + 2;
  }
  copy_to(s.size());
  return out;
}

}  // namespace

bool RetrySites::Add(const RetrySites& more) {
  bool added = false;
  auto merge = [&](std::vector<size_t>& to, const std::vector<size_t>& from) {
    const size_t before = to.size();
    to.insert(to.end(), from.begin(), from.end());
    std::sort(to.begin(), to.end());
    to.erase(std::unique(to.begin(), to.end()), to.end());
    added = added || to.size() != before;
  };
  merge(conditionals, more.conditionals);
  merge(mixed_operators, more.mixed_operators);
  merge(vector_casts, more.vector_casts);
  merge(mask_casts, more.mask_casts);
  merge(short_lists, more.short_lists);
  merge(vector_constructors, more.vector_constructors);
  merge(redefinitions, more.redefinitions);
  return added;
}

namespace {

// The extent of the definition of a function whose name is at `name`:
// from the start of its declaration (after the `;`, `{` or `}` before it:
// its template header and attributes included) to the `}` of its body;
// nullopt where there is no body, or its parameters name neither `device`
// nor `constant`.
std::optional<std::pair<size_t, size_t>> DefinitionExtent(std::string_view s,
                                                          size_t name) {
  const size_t open = SkipSpace(s, IdentifierEnd(s, name));
  if (open >= s.size() || s[open] != '(') return std::nullopt;
  const size_t close = MatchingClose(s, open);
  if (close == npos) return std::nullopt;
  bool qualified = false;
  for (size_t k = open; k < close; ++k) {
    if (WordAt(s, k, "device") || WordAt(s, k, "constant")) qualified = true;
  }
  if (!qualified) return std::nullopt;
  size_t body = close + 1;
  while (body < s.size() && s[body] != '{' && s[body] != ';') ++body;
  if (body >= s.size() || s[body] != '{') return std::nullopt;
  const size_t end = MatchingClose(s, body);
  if (end == npos) return std::nullopt;
  size_t start = name;
  while (start > 0 && s[start - 1] != ';' && s[start - 1] != '{' &&
         s[start - 1] != '}') {
    --start;
  }
  return std::pair(start, end + 1);
}

}  // namespace

RewrittenSource RewriteMetalAttributes(
    std::string_view s, const RetrySites& retry,
    const std::vector<std::string>& only_kernels) {
  if (retry.redefinitions.empty()) {
    return Rewrite(s, retry, Survey(s), only_kernels);
  }
  // Overloads on `device` and `constant` alone are one function here (both
  // address spaces are __global): the second definition is left out, its
  // lines kept, so every offset stays where it was.
  std::string kept(s);
  for (size_t name : retry.redefinitions) {
    if (const auto extent = DefinitionExtent(s, name)) {
      for (size_t k = extent->first; k < extent->second; ++k) {
        if (kept[k] != '\n') kept[k] = ' ';
      }
    }
  }
  return Rewrite(kept, retry, Survey(kept), only_kernels);
}

std::vector<std::string> ExplicitInstantiations(std::string_view source) {
  // No kernel is named "": every instantiation is left out, and listed.
  return Rewrite(source, {}, Survey(source), {std::string()}).skipped_kernels;
}

}  // namespace mtlemu::msl
