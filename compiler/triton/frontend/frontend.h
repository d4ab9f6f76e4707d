// The Triton front end's entry: a @triton.jit kernel of a Python file,
// specialized for one launch, as block IR (one tt.func).
//
// Specialization follows Triton: each constexpr parameter takes its value
// (given, or its default) and disappears from the signature; an integer
// argument equal to 1 becomes the constant 1; None becomes the constant
// None; other integers are i32 (i64 when they do not fit) with
// tt.divisibility = 16 when they are multiples of 16; floats are f32;
// booleans i1; buffers are pointers to their element type. Integers above
// int64's range are u64; a tuple of constants is folded into the code, as a
// constexpr is.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/triton/frontend/dtype.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::frontend {

// A launch argument, as the caller knows it.
struct KernelArg {
  enum class Kind {
    kPointer,
    kInt,
    kFloat,
    kBool,
    kNone,
    kString,
    kDType,
    kTuple
  };
  Kind kind = Kind::kNone;
  const DType* dtype = nullptr;  // kPointer: the element type; kDType
  int64_t int_value = 0;         // kInt (uint64: its bits), kBool (0/1)
  double float_value = 0;        // kFloat
  std::string text;              // kString
  std::vector<KernelArg> items;  // kTuple: constants, folded as constexprs
  bool is_uint64 = false;        // kInt: a value above int64's range

  // The argument a command-line value spells, for values that are not
  // buffers: None, True/False, an integer, a float, a dtype name (fp16,
  // float16, tl.float16, bfloat16...), else the text itself.
  static KernelArg FromText(const std::string& text);
  std::string Describe() const;  // for messages: "int 128", "pointer<fp32>"
};

// A parameter of the kernel's Python signature.
struct KernelParam {
  std::string name;
  bool is_constexpr = false;
  bool has_default = false;
  // After specialization: the argument index in the IR function, or -1 when
  // the parameter was folded into the code (constexpr, == 1, None).
  int ir_arg = -1;
  // "autotune" or "heuristics" when the kernel's decorators give the value
  // of a parameter the launch leaves out.
  std::string provided_by;
};

// A name of the kernel's module that the host binds to a function or
// module its text does not say: a library that puts a jit function into
// the globals of a module it generates, or that picks a libdevice module
// at run time (`shim = backend_libdevice()`, `erf = shim.erf`).
struct HostReference {
  std::string name;  // the name
  // The .py file of the module that has the name (a jit function the
  // kernel calls may read it); empty: the kernel's module.
  std::string module_file;
  // A function: the .py file that defines it and its name there; else
  // empty, and `target` is a builtin module or function, dotted
  // ("triton.language.extra.libdevice.erf").
  std::string file;
  std::string target;
};

struct FrontendRequest {
  std::string file;                   // the .py file
  std::optional<std::string> source;  // its text; read from `file` if unset
  std::string kernel;                 // the @triton.jit function's name
  std::vector<std::pair<std::string, KernelArg>> args;  // by parameter name
  std::vector<std::string> module_paths;  // where imports are looked up
  // Which of an @triton.autotune kernel's configs gives the parameters the
  // arguments leave out (and num_warps), when its configs can be read.
  int autotune_config = 0;
  // Values of names of the kernel's module that the host knows better than
  // the file (a Python caller's globals and closure variables: numbers,
  // strings, None, dtypes). They take precedence over the file's
  // definitions and may name what the file does not define.
  std::vector<std::pair<std::string, KernelArg>> globals;
  // Names bound to functions of other files and to builtins, over the
  // file's definitions.
  std::vector<HostReference> references;
};

struct FrontendOutput {
  std::unique_ptr<ir::Module> module;  // one public tt.func: the kernel
  std::vector<KernelParam> params;     // in Python order
  std::vector<std::string> messages;   // what tl.static_print printed
  // num_warps of the autotune config used, when one was.
  std::optional<int> num_warps;
  // What the compilation decided for the caller to show ("autotune: config
  // 0 of 4: BLOCK_SIZE_M=128 ...").
  std::vector<std::string> notes;
};

// The kernel's parameters, read without compiling it (to tell a caller
// which arguments it needs). Errors: the file, the kernel not found.
Result<std::vector<KernelParam>> ReadKernelParams(
    const FrontendRequest& request);

// Compiles the kernel for the request's arguments. Errors name the Python
// file, line and column ("kernel.py:12:8: error: ..."), with the source
// line, and the calls that led there.
Result<FrontendOutput> CompileKernel(const FrontendRequest& request);

// The names the builtin module `dotted` ("triton.language",
// "triton.language.math", "triton"...) gives kernels (builtins.def's rows,
// the prelude's functions, classes, enums, submodules), sorted; empty when
// `dotted` is no builtin module. The Python package answers hasattr from it.
std::vector<std::string> BuiltinModuleNames(const std::string& dotted);

}  // namespace mtlemu::triton::frontend
