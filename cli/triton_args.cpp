#include "cli/triton_args.h"

#include <fmt/format.h>

#include <filesystem>
#include <iterator>
#include <set>
#include <utility>
#include <variant>

namespace mtlemu::cli {
namespace {

using triton::frontend::DType;
using triton::frontend::KernelArg;
using triton::frontend::KernelParam;

constexpr const char* kArgSyntax =
    "expected NAME=SPEC, SPEC a buffer (FILE.npy or TYPE[COUNT]:GEN), "
    "*DTYPE, or a value (128, 1e-5, True, None, fp16, text)";

// Triton leaves these out of a kernel's TTIR signature.
constexpr const char* kSpecializedNote =
    "Triton leaves constexprs and integer arguments equal to 1 out of the "
    "TTIR signature";

// Triton's name for each Metal scalar type's data.
constexpr std::pair<isa::ScalarType, const char*> kTritonDTypes[] = {
    {isa::ScalarType::kBool, "int1"},     {isa::ScalarType::kChar, "int8"},
    {isa::ScalarType::kUChar, "uint8"},   {isa::ScalarType::kShort, "int16"},
    {isa::ScalarType::kUShort, "uint16"}, {isa::ScalarType::kInt, "int32"},
    {isa::ScalarType::kUInt, "uint32"},   {isa::ScalarType::kLong, "int64"},
    {isa::ScalarType::kULong, "uint64"},  {isa::ScalarType::kHalf, "fp16"},
    {isa::ScalarType::kBFloat, "bf16"},   {isa::ScalarType::kFloat, "fp32"},
};
static_assert(std::size(kTritonDTypes) == isa::kNumScalarTypes,
              "every Metal scalar type has a Triton dtype");

bool IsPythonFile(const std::string& path) {
  return std::filesystem::path(path).extension() == ".py";
}

KernelArg PointerTo(const DType* element) {
  KernelArg a;
  a.kind = KernelArg::Kind::kPointer;
  a.dtype = element;
  return a;
}

Error ArgError(const TritonArg& arg, const std::string& what) {
  return Error{"--arg '" + arg.text + "': " + what};
}

// The element type of a buffer SPEC, loading its data when `with_data`.
Result<isa::ScalarType> ResolveBuffer(TritonArg& arg, std::string_view spec,
                                      bool with_data) {
  Result<BufferSource> source = ParseBufferSource(spec);
  if (!source.ok()) return ArgError(arg, source.error().message);
  if (const auto* generated = std::get_if<GeneratedBuffer>(&source.value());
      generated != nullptr && !with_data) {
    return generated->type;
  }
  Result<BufferData> data = LoadBufferData(source.value());
  if (!data.ok()) return ArgError(arg, data.error().message);
  const isa::ScalarType type = data.value().type;
  if (with_data) arg.data = std::move(data).value();
  return type;
}

Result<TritonArg> ResolveTritonArg(const std::string& text, bool with_data) {
  TritonArg arg;
  arg.text = text;
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return ArgError(arg, kArgSyntax);
  arg.name = text.substr(0, eq);
  const std::string spec = text.substr(eq + 1);
  if (IsNpyPath(spec) || spec.find('[') != std::string::npos) {
    Result<isa::ScalarType> type = ResolveBuffer(arg, spec, with_data);
    if (!type.ok()) return type.error();
    arg.value = PointerTo(TritonDType(type.value()));
  } else if (spec.starts_with("*")) {
    const KernelArg element = KernelArg::FromText(spec.substr(1));
    if (element.kind != KernelArg::Kind::kDType) {
      return ArgError(arg, "'" + spec +
                               "' is not a pointer type (expected *DTYPE: "
                               "*fp32, *fp16, *bf16, *int32 ...)");
    }
    if (with_data) {
      return ArgError(arg,
                      "a pointer type has no data; a run needs a buffer "
                      "(FILE.npy or TYPE[COUNT]:GEN)");
    }
    arg.value = PointerTo(element.dtype);
  } else {
    arg.value = KernelArg::FromText(spec);
  }
  return arg;
}

std::string ParamList(const std::vector<KernelParam>& params) {
  std::vector<std::string> names;
  for (const KernelParam& p : params) {
    std::string n = p.name;
    if (p.is_constexpr) n += ": constexpr";
    if (p.has_default) n += " = default";
    if (!p.provided_by.empty()) n += " = " + p.provided_by;
    names.push_back(std::move(n));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string SignatureList(const std::vector<triton::lower::LoweredArg>& sig) {
  std::vector<std::string> names;
  for (const triton::lower::LoweredArg& a : sig) {
    names.push_back(a.name + ": " + a.type->ToString());
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string NeedsArgs(const std::string& kernel,
                      const std::vector<std::string>& missing) {
  std::string needs;
  for (const std::string& name : missing) needs += " --arg " + name + "=...";
  return "kernel '" + kernel + "' needs" + needs;
}

// A .py kernel's parameters against the arguments, before compiling.
Status CheckPythonArgs(const std::string& kernel,
                       const std::vector<KernelParam>& params,
                       const std::vector<TritonArg>& args) {
  std::set<std::string> given;
  for (const TritonArg& a : args) {
    bool known = false;
    for (const KernelParam& p : params) known |= p.name == a.name;
    if (!known) {
      return ArgError(a, fmt::format("kernel '{}' has no parameter '{}' "
                                     "(parameters: {})",
                                     kernel, a.name, ParamList(params)));
    }
    given.insert(a.name);
  }
  std::vector<std::string> missing;
  for (const KernelParam& p : params) {
    if (!p.has_default && p.provided_by.empty() && !given.count(p.name)) {
      missing.push_back(p.name);
    }
  }
  if (missing.empty()) return {};
  return Error{NeedsArgs(kernel, missing) +
               " (parameters: " + ParamList(params) + ")"};
}

// A TTIR kernel's signature against the arguments, after compiling.
Status CheckSignatureArgs(const api::TritonKernel& kernel,
                          const std::vector<TritonArg>& args, bool for_launch) {
  const std::string signature = SignatureList(kernel.args);
  for (const TritonArg& a : args) {
    const triton::lower::LoweredArg* param = nullptr;
    for (const triton::lower::LoweredArg& p : kernel.args) {
      if (p.name == a.name) param = &p;
    }
    if (param == nullptr) {
      return ArgError(
          a, fmt::format("kernel '{}' has no parameter '{}' (its TTIR "
                         "signature: {}; {})",
                         kernel.function, a.name, signature, kSpecializedNote));
    }
    if (param->is_pointer && a.value.kind == KernelArg::Kind::kPointer &&
        param->type->pointee() != a.value.dtype->ToIr()) {
      return ArgError(
          a, fmt::format("'{}' is {}, but the buffer holds {}", a.name,
                         param->type->ToString(), a.value.dtype->Name()));
    }
  }
  if (!for_launch) return {};
  std::vector<std::string> missing;
  for (const triton::lower::LoweredArg& p : kernel.args) {
    bool given = false;
    for (const TritonArg& a : args) given |= a.name == p.name;
    if (!given) missing.push_back(p.name);
  }
  if (missing.empty()) return {};
  return Error{NeedsArgs(kernel.function, missing) +
               " (its TTIR signature: " + signature + ")"};
}

}  // namespace

Result<std::vector<TritonArg>> ResolveTritonArgs(
    const std::vector<std::string>& texts, bool with_data) {
  std::vector<TritonArg> args;
  std::set<std::string> names;
  for (const std::string& text : texts) {
    Result<TritonArg> arg = ResolveTritonArg(text, with_data);
    if (!arg.ok()) return arg.error();
    if (!names.insert(arg.value().name).second) {
      return ArgError(arg.value(), "'" + arg.value().name + "' is given twice");
    }
    args.push_back(std::move(arg).value());
  }
  return args;
}

const DType* TritonDType(isa::ScalarType type) {
  for (const auto& [metal, triton] : kTritonDTypes) {
    if (metal == type) return DType::FromName(triton);
  }
  return nullptr;
}

Result<api::TritonLibrary> CompileTritonKernel(
    Device* device, const std::string& file, const std::string& kernel,
    const TritonOptions& options, const std::vector<TritonArg>& args,
    bool for_launch, std::FILE* messages) {
  api::TritonRequest request;
  request.file = file;
  request.kernel = kernel;
  request.module_paths = options.module_paths;
  request.num_warps = options.num_warps;
  request.enable_fp_fusion = !options.no_fp_fusion;
  request.autotune_config = options.autotune_config;
  for (const TritonArg& a : args) request.args.emplace_back(a.name, a.value);
  if (IsPythonFile(file)) {
    triton::frontend::FrontendRequest params_request;
    params_request.file = file;
    params_request.kernel = kernel;
    params_request.module_paths = options.module_paths;
    params_request.autotune_config = options.autotune_config;
    Result<std::vector<KernelParam>> params =
        triton::frontend::ReadKernelParams(params_request);
    if (!params.ok()) return params.error();
    if (Status s = CheckPythonArgs(kernel, params.value(), args); !s.ok()) {
      return s.error();
    }
  }
  api::TritonLibrary compiled;
  if (device != nullptr) {
    Result<api::TritonLibrary> library =
        api::newLibraryWithTriton(*device, request);
    if (!library.ok()) return library.error();
    compiled = std::move(library).value();
  } else {
    Result<api::TritonKernel> lowered = api::CompileTriton(request);
    if (!lowered.ok()) return lowered.error();
    compiled.kernel = std::move(lowered).value();
  }
  for (const std::string& n : compiled.kernel.notes) {
    std::fprintf(messages, "note: %s\n", n.c_str());
  }
  for (const std::string& m : compiled.kernel.messages) {
    std::fprintf(messages, "%s\n", m.c_str());
  }
  if (!IsPythonFile(file)) {
    if (Status s = CheckSignatureArgs(compiled.kernel, args, for_launch);
        !s.ok()) {
      return s.error();
    }
  }
  return compiled;
}

Status CheckOptionsApply(const std::string& file,
                         std::span<const OptionUse> metal_only,
                         std::span<const OptionUse> triton_only) {
  const bool triton = api::IsTritonFile(file);
  for (const OptionUse& o : triton ? metal_only : triton_only) {
    if (!o.given) continue;
    if (triton) {
      return Error{fmt::format(
          "{} is for Metal and ISA kernels; {} is a Triton kernel, which "
          "takes --arg NAME=SPEC, --num-warps N and --grid in programs",
          o.name, file)};
    }
    return Error{fmt::format(
        "{} is for Triton kernels (.py, .ttir, .mlir); {} is not one", o.name,
        file)};
  }
  return {};
}

}  // namespace mtlemu::cli
