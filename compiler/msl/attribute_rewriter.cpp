#include "compiler/msl/attribute_rewriter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mtlemu::msl {
namespace {

// C++ attributes that are not Metal's and stay as they are.
constexpr std::array<std::string_view, 9> kStandardAttributes = {
    "maybe_unused", "nodiscard",          "fallthrough",
    "likely",       "unlikely",           "noreturn",
    "deprecated",   "carries_dependency", "no_unique_address"};

constexpr size_t npos = std::string_view::npos;

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Skips a comment or literal starting at `i`; returns the index after it,
// or `i` when none starts there.
size_t SkipCommentOrLiteral(std::string_view s, size_t i) {
  if (s.compare(i, 2, "//") == 0) {
    const size_t end = s.find('\n', i);
    return end == std::string_view::npos ? s.size() : end;
  }
  if (s.compare(i, 2, "/*") == 0) {
    const size_t end = s.find("*/", i + 2);
    return end == std::string_view::npos ? s.size() : end + 2;
  }
  if (s[i] == '"' || s[i] == '\'') {
    const char quote = s[i];
    size_t j = i + 1;
    while (j < s.size() && s[j] != quote && s[j] != '\n') {
      j += s[j] == '\\' ? 2 : 1;
    }
    return std::min(j + 1, s.size());
  }
  return i;
}

// The offset of the bracket that closes the `(`, `[` or `{` at `open`
// (brackets of all three kinds nest; comments and literals are skipped), or
// npos when the text ends first.
size_t MatchingClose(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t k = open; k < s.size(); ++k) {
    const size_t skipped = SkipCommentOrLiteral(s, k);
    if (skipped != k) {
      k = skipped - 1;
      continue;
    }
    const char c = s[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && --depth == 0) return k;
  }
  return std::string_view::npos;
}

// Function-pointer template parameters, `template <float (*F)(float)>`: in
// C++ for OpenCL the pointee of a pointer written that way is in the generic
// address space, so `&f` needs a conversion and is no constant expression
// ("invalid explicitly-specified argument"). Such a parameter is rewritten
// to `auto F`, which takes `f` and `&f` alike. Returns the parameters found
// in the template header at `i` ("template" followed by "<") as
// (start, end, name), offsets into `s`; empty for anything else.
struct FunctionPointerParameter {
  size_t start, end;
  std::string name;
};

std::vector<FunctionPointerParameter> FunctionPointerParameters(
    std::string_view s, size_t i) {
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
                   std::string(s.substr(name_start, name_end - name_start))});
            }
          }
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

RewrittenSource RewriteMetalAttributes(
    std::string_view s, const std::vector<size_t>& conditionals) {
  RewrittenSource out;
  // Text to insert before an offset: __mtl_rvalue( and ) around the
  // operands of the conditionals named.
  std::map<size_t, std::string> insertions;
  for (size_t q : conditionals) {
    const auto operands = ConditionalOperands(s, q);
    if (!operands) continue;
    for (const auto& [start, end] : *operands) {
      if (start >= end) continue;
      insertions[start] += "__mtl_rvalue(";
      insertions[end] = ")" + insertions[end];
    }
  }
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
    if (s[i] == 't') {
      const std::vector<FunctionPointerParameter> params =
          FunctionPointerParameters(s, i);
      for (const FunctionPointerParameter& p : params) {
        copy_to(p.start);
        out.anchors.emplace_back(out.text.size(), p.start);
        out.text += "auto " + p.name;
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
    // elsewhere).
    if (s[i] == 'c' && (i == 0 || !IsIdentifierChar(s[i - 1])) &&
        s.compare(i, 9, "constant ") == 0) {
      size_t k = i + 9;
      while (k < s.size() && s[k] == ' ') ++k;
      if (s.compare(k, 4, "char") == 0 && k + 4 < s.size() &&
          !IsIdentifierChar(s[k + 4])) {
        size_t star = k + 4;
        while (star < s.size() && s[star] == ' ') ++star;
        if (star < s.size() && s[star] == '*') {
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
      const std::string index_text = attributes[0].arguments;
      char* end = nullptr;
      const long index = std::strtol(index_text.c_str(), &end, 0);
      if (name_start < name_end && end != index_text.c_str()) {
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

}  // namespace mtlemu::msl
