#include "compiler/msl/vec_deduction.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "compiler/msl/source_scan.h"

namespace mtlemu::msl {
namespace {

constexpr size_t npos = std::string_view::npos;

// More deducible parameters than this get the two uniform forms only.
constexpr size_t kMaxMixedParameters = 3;

// The pieces of a comma-separated list, split at its own depth.
std::vector<std::string_view> SplitTopLevel(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    const char c = s[k];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(s.substr(start, k - start));
      start = k + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

// `template <...>` at `i`: its `>` and the names of its type parameters
// (`typename T`, `class U = int`, `typename... Ts`).
struct TemplateHead {
  size_t close;
  std::vector<std::string> type_parameters;
};

std::optional<TemplateHead> HeadAt(std::string_view s, size_t i) {
  if (!WordAt(s, i, "template")) return std::nullopt;
  const size_t open = SkipSpace(s, i + 8);
  if (open >= s.size() || s[open] != '<') return std::nullopt;
  const size_t close = MatchingAngle(s, open);
  if (close == npos) return std::nullopt;
  TemplateHead head{close, {}};
  for (std::string_view p :
       SplitTopLevel(s.substr(open + 1, close - open - 1))) {
    p = Trim(p);
    size_t k = 0;
    if (WordAt(p, 0, "typename")) {
      k = 8;
    } else if (WordAt(p, 0, "class")) {
      k = 5;
    } else {
      continue;
    }
    k = SkipSpace(p, k);
    if (p.compare(k, 3, "...") == 0) continue;  // a pack: not handled
    const size_t end = IdentifierEnd(p, k);
    if (end > k) head.type_parameters.emplace_back(p.substr(k, end - k));
  }
  return head;
}

// A use of vec<P, E> (or of an alias of one) that deduces P: [start, end)
// of the source, P and E.
struct VecUse {
  size_t start, end;
  std::string parameter, size;
};

// The arguments of the `vec<A, B>` whose `<` is at `lt`: A, B and the
// offset after its `>`; nullopt for another count.
struct VecArguments {
  std::string element, size;
  size_t after;
};
std::optional<VecArguments> VecArgumentsAt(std::string_view s, size_t lt) {
  const size_t gt = MatchingAngle(s, lt);
  if (gt == npos) return std::nullopt;
  const auto args = SplitTopLevel(s.substr(lt + 1, gt - lt - 1));
  if (args.size() != 2) return std::nullopt;
  return VecArguments{std::string(Trim(args[0])), std::string(Trim(args[1])),
                      gt + 1};
}

// `vec<` at `k` (after optional `typename`, `::` and `metal::`): where
// the qualified name starts and the `<`.
std::optional<std::pair<size_t, size_t>> VecNameAt(std::string_view s,
                                                   size_t k) {
  if (!WordAt(s, k, "vec")) return std::nullopt;
  const size_t lt = SkipSpace(s, k + 3);
  if (lt >= s.size() || s[lt] != '<') return std::nullopt;
  size_t start = k;
  auto preceded_by = [&](std::string_view text) {
    const size_t b = SkipSpaceBack(s, start);
    if (b >= text.size() &&
        s.compare(b - text.size(), text.size(), text) == 0) {
      start = b - text.size();
      return true;
    }
    return false;
  };
  if (preceded_by("metal::")) preceded_by("::");
  const size_t before = SkipSpaceBack(s, start);
  if (before > 0 &&
      (s[before - 1] == '.' || s[before - 1] == '>' || s[before - 1] == ':')) {
    return std::nullopt;  // a member, or another namespace's vec
  }
  if (before >= 8 && WordAt(s, before - 8, "typename")) start = before - 8;
  return std::make_pair(start, lt);
}

}  // namespace

std::vector<VecAlias> FindVecAliases(std::string_view s) {
  std::vector<VecAlias> out;
  if (s.find("vec") == npos) return out;
  // The brace pairs, to know an alias's scope.
  std::vector<std::pair<size_t, size_t>> braces;
  std::vector<size_t> open;
  FindInCode(s, 0, [&](size_t k) {
    if (s[k] == '{') open.push_back(k);
    if (s[k] == '}' && !open.empty()) {
      braces.emplace_back(open.back(), k);
      open.pop_back();
    }
    return false;
  });
  // `vec<A, B>` at `k` (after `typename`, `::`, `metal::`): A, B and the
  // offset of what follows.
  auto vec_arguments = [&](size_t k) -> std::optional<VecArguments> {
    if (WordAt(s, k, "typename")) k = SkipSpace(s, k + 8);
    if (s.compare(k, 2, "::") == 0) k += 2;
    if (s.compare(k, 7, "metal::") == 0) k += 7;
    if (!WordAt(s, k, "vec")) return std::nullopt;
    const size_t lt = SkipSpace(s, k + 3);
    if (lt >= s.size() || s[lt] != '<') return std::nullopt;
    std::optional<VecArguments> args = VecArgumentsAt(s, lt);
    if (args) args->after = SkipSpace(s, args->after);
    return args;
  };
  auto add = [&](size_t at, std::string name, std::string parameter,
                 VecArguments args) {
    VecAlias alias{std::move(name),
                   std::move(parameter),
                   std::move(args.element),
                   std::move(args.size),
                   0,
                   s.size()};
    for (const auto& [o, c] : braces) {
      if (o < at && at < c && o >= alias.scope_open) {
        alias.scope_open = o;
        alias.scope_close = c;
      }
    }
    out.push_back(std::move(alias));
  };
  // `[template <typename U>] using NAME = vec<A, B>;`
  for (size_t i = s.find("using"); i != npos; i = s.find("using", i + 5)) {
    if (!WordAt(s, i, "using")) continue;
    size_t k = SkipSpace(s, i + 5);
    const size_t name_end = IdentifierEnd(s, k);
    if (name_end == k) continue;
    std::string name(s.substr(k, name_end - k));
    k = SkipSpace(s, name_end);
    if (k >= s.size() || s[k] != '=') continue;
    const auto args = vec_arguments(SkipSpace(s, k + 1));
    if (!args || args->after >= s.size() || s[args->after] != ';') continue;
    std::string parameter;
    const size_t b = SkipSpaceBack(s, i);
    if (b > 0 && s[b - 1] == '>') {
      const size_t head_start = s.rfind("template", b - 1);
      const std::optional<TemplateHead> head =
          head_start == npos ? std::nullopt : HeadAt(s, head_start);
      if (!head || head->close != b - 1) continue;
      // Only an alias of its own single type parameter deduces.
      if (head->type_parameters.size() != 1 ||
          head->type_parameters[0] != args->element) {
        continue;
      }
      parameter = head->type_parameters[0];
    }
    add(i, std::move(name), std::move(parameter), *args);
  }
  // `typedef vec<A, B> NAME;`
  for (size_t i = s.find("typedef"); i != npos; i = s.find("typedef", i + 7)) {
    if (!WordAt(s, i, "typedef")) continue;
    const size_t k = SkipSpace(s, i + 7);
    size_t gt = s.find('>', k);
    const size_t semicolon = s.find(';', k);
    if (gt == npos || semicolon == npos || gt > semicolon) continue;
    // NAME is the last word before the `;`.
    const size_t name_end = std::max(k, SkipSpaceBack(s, semicolon));
    size_t name_start = name_end;
    while (name_start > k && IsIdentifierChar(s[name_start - 1])) --name_start;
    if (name_start == name_end) continue;
    const auto args = vec_arguments(k);
    if (!args || args->after != name_start) continue;
    add(i, std::string(s.substr(name_start, name_end - name_start)), "", *args);
  }
  return out;
}

namespace {

// The uses in [from, to) that deduce one of `parameters`.
std::vector<VecUse> FindUses(std::string_view s, size_t from, size_t to,
                             const std::vector<std::string>& parameters,
                             const std::vector<VecAlias>& aliases) {
  auto is_parameter = [&](std::string_view p) {
    return std::find(parameters.begin(), parameters.end(), p) !=
           parameters.end();
  };
  std::vector<VecUse> out;
  for (size_t k = from; k < to; ++k) {
    if (!IsIdentifierChar(s[k]) || (k > 0 && IsIdentifierChar(s[k - 1]))) {
      continue;
    }
    const size_t word_end = IdentifierEnd(s, k);
    if (const auto vec = VecNameAt(s, k)) {
      const size_t gt = MatchingAngle(s, vec->second);
      if (gt == npos || gt >= to) break;
      if (const auto args = VecArgumentsAt(s, vec->second);
          args && is_parameter(args->element)) {
        out.push_back({vec->first, gt + 1, args->element, args->size});
      }
      k = gt;
      continue;
    }
    const std::string_view word = s.substr(k, word_end - k);
    const size_t lt = SkipSpace(s, word_end);
    for (const VecAlias& alias : aliases) {
      if (alias.parameter.empty() || word != alias.name || lt >= s.size() ||
          s[lt] != '<' || k < alias.scope_open || k > alias.scope_close) {
        continue;
      }
      const size_t gt = MatchingAngle(s, lt);
      if (gt == npos || gt >= to) break;
      const std::string_view arg = Trim(s.substr(lt + 1, gt - lt - 1));
      size_t start = k;
      const size_t before = SkipSpaceBack(s, k);
      if (before >= 8 && WordAt(s, before - 8, "typename")) {
        start = before - 8;
      }
      if (is_parameter(arg)) {
        out.push_back({start, gt + 1, std::string(arg), alias.size});
      }
      k = gt;
      break;
    }
    k = std::max(k, word_end - 1);
  }
  return out;
}

// What follows a template head: where the deducible places are ([from,
// to): a function's parameter list, a partial specialization's arguments)
// and where the whole declaration ends (after its body), or nullopt for
// anything else.
struct Entity {
  size_t from, to, end;
  bool is_function;
};

std::optional<Entity> EntityAfter(std::string_view s, size_t k) {
  k = SkipSpace(s, k);
  if (WordAt(s, k, "template") || WordAt(s, k, "using") ||
      WordAt(s, k, "friend")) {
    return std::nullopt;
  }
  if (WordAt(s, k, "struct") || WordAt(s, k, "class")) {
    size_t n = SkipSpace(s, IdentifierEnd(s, k));
    const size_t name_end = IdentifierEnd(s, n);
    if (name_end == n) return std::nullopt;
    const size_t lt = SkipSpace(s, name_end);
    if (lt >= s.size() || s[lt] != '<') return std::nullopt;
    const size_t gt = MatchingAngle(s, lt);
    if (gt == npos) return std::nullopt;
    size_t brace = gt + 1;
    while (brace < s.size() && s[brace] != '{' && s[brace] != ';') ++brace;
    if (brace >= s.size() || s[brace] != '{') return std::nullopt;
    const size_t close = MatchingClose(s, brace);
    if (close == npos) return std::nullopt;
    const size_t semicolon = SkipSpace(s, close + 1);
    if (semicolon >= s.size() || s[semicolon] != ';') return std::nullopt;
    return Entity{lt, gt + 1, semicolon + 1, false};
  }
  // A function: its parameter list is the first `(` that is not part of
  // its return type (decltype, alignas, attributes).
  size_t open = npos;
  for (size_t j = k; j < s.size(); ++j) {
    const char c = s[j];
    if (c == ';' || c == '{' || c == '=' || c == '}') return std::nullopt;
    if (c == '<') {
      j = MatchingAngle(s, j);
      if (j == npos) return std::nullopt;
      continue;
    }
    if (c == '(') {
      size_t w = j;
      while (w > k && IsSpace(s[w - 1])) --w;
      size_t ws = w;
      while (ws > k && IsIdentifierChar(s[ws - 1])) --ws;
      const std::string_view word = s.substr(ws, w - ws);
      if (word == "decltype" || word == "alignas" || word == "__attribute__" ||
          word == "alignof" || word == "sizeof") {
        j = MatchingClose(s, j);
        if (j == npos) return std::nullopt;
        continue;
      }
      open = j;
      break;
    }
  }
  if (open == npos) return std::nullopt;
  const size_t close = MatchingClose(s, open);
  if (close == npos) return std::nullopt;
  // Its body or its `;`; a constructor's initializer list is not handled.
  for (size_t j = close + 1; j < s.size(); ++j) {
    const char c = s[j];
    if (c == '(' || c == '[') {
      j = MatchingClose(s, j);
      if (j == npos) return std::nullopt;
      continue;
    }
    if (c == ':' && (j + 1 >= s.size() || s[j + 1] != ':') &&
        (j == 0 || s[j - 1] != ':')) {
      return std::nullopt;
    }
    if (c == ';') return Entity{open, close, j + 1, true};
    if (c == '{') {
      const size_t body_close = MatchingClose(s, j);
      if (body_close == npos) return std::nullopt;
      return Entity{open, close, body_close + 1, true};
    }
    if (c == '}' || c == '=') return std::nullopt;
  }
  return std::nullopt;
}

std::string ExtForm(const VecUse& u) {
  return "__mtl_ev<" + u.parameter + ", " + u.size + ">";
}
std::string ClassForm(const VecUse& u) {
  return "__mtl_cvec<" + u.parameter + ", " + u.size + ">";
}

// The text on one line, so that the lines after it keep their numbers:
// a `#pragma` line (the preprocessor puts `_Pragma`s from macros, such as
// MLX's STEEL_PRAGMA_UNROLL, on lines of their own) goes back to
// `_Pragma("...")`; line markers go.
std::string OneLine(std::string_view text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    const std::string_view trimmed = Trim(line);
    if (!trimmed.empty() && trimmed.front() == '#') {
      std::string_view directive = Trim(trimmed.substr(1));
      if (directive.compare(0, 6, "pragma") == 0) {
        out += " _Pragma(\"";
        for (char c : Trim(directive.substr(6))) {
          if (c == '"' || c == '\\') out += '\\';
          out += c;
        }
        out += "\") ";
      }
    } else {
      out.append(line);
      out += ' ';
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

VecDeductionEdits FindVecDeductions(std::string_view s,
                                    const std::vector<VecAlias>& aliases) {
  VecDeductionEdits out;
  if (s.find("vec") == npos) return out;
  for (size_t i = s.find("template"); i != npos;
       i = s.find("template", i + 8)) {
    const std::optional<TemplateHead> head = HeadAt(s, i);
    if (!head || head->type_parameters.empty()) continue;
    const std::optional<Entity> entity = EntityAfter(s, head->close + 1);
    if (!entity) continue;
    const std::vector<VecUse> uses =
        FindUses(s, entity->from, entity->to, head->type_parameters, aliases);
    if (uses.empty()) continue;
    // The deduced parameters, in order of first use; a form picks ext or
    // class vectors for each (bit p set: class).
    std::vector<std::string> deduced;
    for (const VecUse& u : uses) {
      if (std::find(deduced.begin(), deduced.end(), u.parameter) ==
          deduced.end()) {
        deduced.push_back(u.parameter);
      }
    }
    const unsigned all = (1u << deduced.size()) - 1;
    std::vector<unsigned> forms;
    if (deduced.size() <= kMaxMixedParameters) {
      for (unsigned f = 0; f <= all; ++f) forms.push_back(f);
    } else {
      forms = {0u, ~0u};
    }
    auto form_of = [&](unsigned form, const VecUse& u) {
      const size_t p = std::find(deduced.begin(), deduced.end(), u.parameter) -
                       deduced.begin();
      return (form >> p) & 1u ? ClassForm(u) : ExtForm(u);
    };
    // A function's forms also say which element types each takes, so that
    // explicit arguments (`radix2<float>`, as a template argument) name
    // one form, not an overload set.
    auto constraints = [&](unsigned form) {
      std::string text;
      if (!entity->is_function) return text;
      for (size_t p = 0; p < deduced.size(); ++p) {
        text += std::string(", typename = ::metal::enable_if_t<") +
                ((form >> p) & 1u ? "" : "!") + "__mtl_class_vec_element<" +
                deduced[p] + ">::value>";
      }
      return text;
    };
    out.replacements.push_back(
        {head->close, head->close, constraints(forms[0])});
    for (const VecUse& u : uses) {
      out.replacements.push_back({u.start, u.end, form_of(forms[0], u)});
    }
    for (size_t f = 1; f < forms.size(); ++f) {
      std::string copy = " ";
      copy.append(s.substr(i, head->close - i));
      copy += constraints(forms[f]);
      size_t at = head->close;
      for (const VecUse& u : uses) {
        copy.append(s.substr(at, u.start - at));
        copy += form_of(forms[f], u);
        at = u.end;
      }
      copy.append(s.substr(at, entity->end - at));
      out.copies.push_back({entity->end, OneLine(copy)});
    }
  }
  std::sort(out.replacements.begin(), out.replacements.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  return out;
}

}  // namespace mtlemu::msl
