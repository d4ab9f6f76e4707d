// The builtins of builtins.def: their ids, where their names are found,
// their parameters, and the call a handler receives.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/triton/frontend/codegen.h"
#include "compiler/triton/frontend/py_value.h"

namespace mtlemu::triton::frontend {

enum class BuiltinId : int {
#define BUILTIN(e, name, ns, sig) e,
#define MATH1(e, name, ns, op, allowed) e,
#include "compiler/triton/frontend/builtins.def"
#undef BUILTIN
#undef MATH1
};

// The builtin called `name` in any of the namespaces `mask`, or nullopt.
std::optional<BuiltinId> FindBuiltin(unsigned mask, std::string_view name);
// The names of the builtins found in any of the namespaces `mask`.
std::vector<std::string> BuiltinNames(unsigned mask);
// Its Python name, for messages ("tl.load").
std::string BuiltinName(BuiltinId id);

// A builtin's call with its arguments bound to its signature: `args` holds
// one value per parameter, in order (defaults filled in; a *args parameter
// holds a tuple).
struct BuiltinCall {
  CodeGen& cg;
  Frame& frame;
  SourceLocation loc;
  std::vector<PyValue> args;
  // Which parameters the caller gave (not defaulted).
  std::vector<bool> given;

  Semantic& sem() { return cg.semantic(); }
  const PyValue& arg(int i) const { return args[i]; }
  bool has(int i) const { return given[i] && !args[i].is_none(); }
  // Argument i as a compile-time integer / bool / dtype / shape, or an
  // error naming the parameter.
  int64_t ConstInt(int i) const;
  bool ConstBool(int i) const;
  const DType* ConstDType(int i) const;
  std::vector<int64_t> ConstShape(int i) const;
  std::string ConstString(int i) const;
  // Argument i as a tensor (numbers become constants).
  Tensor AsTensor(int i);
  const std::string& param_name(int i) const;

  BuiltinId id;
};

// Binds arguments to `id`'s signature and runs its handler.
PyValue CallBuiltin(BuiltinId id, CodeGen& cg, Frame& frame,
                    const SourceLocation& loc, std::vector<PyValue> args,
                    std::vector<std::pair<std::string, PyValue>> kwargs);

// The handlers, one per row of builtins.def.
#define BUILTIN(e, name, ns, sig) PyValue Handle##e(BuiltinCall& call);
#define MATH1(e, name, ns, op, allowed)
#include "compiler/triton/frontend/builtins.def"
#undef BUILTIN
#undef MATH1

}  // namespace mtlemu::triton::frontend
