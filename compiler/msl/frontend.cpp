#include "compiler/msl/frontend.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Mangle.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/DiagnosticSema.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/MultiplexConsumer.h>
#include <clang/Sema/SemaConsumer.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <filesystem>
#include <set>

#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl/clang_invocation.h"
#include "compiler/msl/diagnostics.h"
#include "compiler/msl/precompiled_shims.h"
#include "compiler/msl/preprocessor.h"
#include "compiler/msl/shim_attributes.h"
#include "compiler/msl/shim_files.h"

namespace mtlemu::msl {
namespace {

// --- the kernels' argument tables
// ------------------------------------------------

std::optional<isa::ScalarType> ScalarTypeOf(clang::QualType t) {
  t = t.getCanonicalType();
  if (const auto* v = t->getAs<clang::VectorType>()) {
    t = v->getElementType().getCanonicalType();
  }
  const auto* b = t->getAs<clang::BuiltinType>();
  if (b == nullptr) return std::nullopt;
  using K = clang::BuiltinType::Kind;
  switch (b->getKind()) {
    case K::Bool:
      return isa::ScalarType::kBool;
    case K::Char_S:
    case K::SChar:
      return isa::ScalarType::kChar;
    case K::Char_U:
    case K::UChar:
      return isa::ScalarType::kUChar;
    case K::Short:
      return isa::ScalarType::kShort;
    case K::UShort:
      return isa::ScalarType::kUShort;
    case K::Int:
      return isa::ScalarType::kInt;
    case K::UInt:
      return isa::ScalarType::kUInt;
    case K::Long:
      return isa::ScalarType::kLong;
    case K::ULong:
      return isa::ScalarType::kULong;
    case K::Half:
    case K::Float16:
      return isa::ScalarType::kHalf;
    case K::BFloat16:
      return isa::ScalarType::kBFloat;
    case K::Float:
      return isa::ScalarType::kFloat;
    default:
      return std::nullopt;
  }
}

isa::AddressSpace SpaceOf(clang::LangAS as) {
  switch (as) {
    case clang::LangAS::opencl_global:
      return isa::AddressSpace::kDevice;
    case clang::LangAS::opencl_constant:
      return isa::AddressSpace::kConstant;
    case clang::LangAS::opencl_local:
      return isa::AddressSpace::kThreadgroup;
    case clang::LangAS::opencl_private:
      return isa::AddressSpace::kThread;
    default:
      return isa::AddressSpace::kNone;
  }
}

// The Metal attributes (rewritten to annotate("metal.NAME", ARGS...)).
struct MetalAttribute {
  std::string name;
  std::vector<int64_t> integers;
  std::string text;  // a string argument, e.g. host_name's
  clang::SourceLocation location;
};

std::vector<MetalAttribute> MetalAttributesOf(const clang::Decl* d,
                                              const clang::ASTContext& ctx) {
  std::vector<MetalAttribute> out;
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>()) {
    const llvm::StringRef name = a->getAnnotation();
    if (!name.startswith("metal.")) continue;
    MetalAttribute m{std::string(name.drop_front(6)), {}, {}, a->getLocation()};
    for (const clang::Expr* e : a->args()) {
      clang::Expr::EvalResult r;
      if (const auto* s =
              llvm::dyn_cast<clang::StringLiteral>(e->IgnoreParenImpCasts())) {
        m.text = std::string(s->getString());
      } else if (e->EvaluateAsInt(r, ctx)) {
        m.integers.push_back(r.Val.getInt().getExtValue());
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Metal's kernel input attributes that mtlemu knows.
bool IsBuiltinInput(std::string_view name) {
  static constexpr std::string_view kInputs[] = {
      "thread_position_in_grid",
      "thread_position_in_threadgroup",
      "threadgroup_position_in_grid",
      "threads_per_threadgroup",
      "threadgroups_per_grid",
      "thread_index_in_threadgroup",
      "thread_index_in_simdgroup",
      "simdgroup_index_in_threadgroup",
      "threads_per_simdgroup",
      "simdgroups_per_threadgroup",
      "thread_index_in_quadgroup",
      "quadgroup_index_in_threadgroup",
      "quadgroups_per_threadgroup",
      "grid_size",
      "threads_per_grid",
      "dispatch_threads_per_threadgroup",
      "thread_execution_width",
      "dispatch_quadgroups_per_threadgroup",
      "dispatch_simdgroups_per_threadgroup"};
  for (std::string_view k : kInputs) {
    if (k == name) return true;
  }
  return false;
}

// KernelCollector's errors for casts that the retry rewrites.
constexpr char kVectorCastMessage[] =
    "a cast between vector types converts each element in Metal, not their "
    "bits (mtlemu could not rewrite it so)";
constexpr char kMaskCastMessage[] =
    "a cast of a vector comparison makes each true 1 in Metal (mtlemu could "
    "not rewrite it so)";

class KernelCollector : public clang::SemaConsumer,
                        public clang::RecursiveASTVisitor<KernelCollector> {
 public:
  KernelCollector(clang::CompilerInstance& ci, FrontendResult& out)
      : ci_(ci), out_(out) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  void Initialize(clang::ASTContext& ctx) override {
    ctx_ = &ctx;
    names_ = std::make_unique<clang::ASTNameGenerator>(ctx);
  }
  void InitializeSema(clang::Sema& sema) override {
    InstallThreadgroupVariableSupport(sema);
  }

  // Runs before code generation sees the declarations (this consumer comes
  // first): kernels are read here and their Metal annotations removed, as
  // clang would otherwise emit them as llvm.var.annotation calls.
  bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
    for (clang::Decl* d : group) {
      top_level_.push_back(d);
      VisitNow(d);
    }
    return true;
  }

  // Declarations of the precompiled shims as they load: no kernels there.
  void HandleInterestingDecl(clang::DeclGroupRef) override {}

  // Template instantiations are complete only now, still before code
  // generation emits them. Only the declarations the source itself made
  // are walked: walking the whole translation unit would load every
  // declaration of the precompiled shims.
  void HandleTranslationUnit(clang::ASTContext&) override {
    for (clang::Decl* d : top_level_) TraverseDecl(d);
  }

  // Metal ignores attributes on the parameters of functions that are not
  // kernels (MLX's helpers repeat their kernel's [[buffer(n)]]s) and on
  // fields; clang would emit them as llvm.var/ptr.annotation calls, so they
  // go. A kernel's parameters are read before this runs (the visitor
  // visits a function before its parameters).
  bool VisitParmVarDecl(clang::ParmVarDecl* p) {
    DropMetalAnnotations(*p);
    return true;
  }
  bool VisitFieldDecl(clang::FieldDecl* f) {
    DropMetalAnnotations(*f);
    return true;
  }
  // `(float4)i` with i an int4, `T(x > 0)` with T a float4: clang makes a
  // cast between vectors of one size a bit cast; Metal converts each
  // element (a comparison's true, all ones in clang, is 1). Each such cast
  // in the user's file is an error the retry rewrites (RetrySites::
  // vector_casts, mask_casts): the message is for the observer, and the
  // user sees it only where the rewrite did not take.
  bool VisitExplicitCastExpr(clang::ExplicitCastExpr* e) {
    if (e->getCastKind() != clang::CK_BitCast) return true;
    const auto* to = e->getType()->getAs<clang::VectorType>();
    const auto* from = e->getSubExpr()->getType()->getAs<clang::VectorType>();
    if (to == nullptr || from == nullptr) return true;
    const clang::QualType te = to->getElementType();
    const clang::QualType fe = from->getElementType();
    const clang::SourceManager& sm = ctx_->getSourceManager();
    if (ctx_->hasSameUnqualifiedType(te, fe) ||
        !sm.isInMainFile(sm.getExpansionLoc(e->getBeginLoc()))) {
      return true;
    }
    const clang::Expr* operand = e->getSubExpr()->IgnoreParenImpCasts();
    bool mask = false;
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(operand)) {
      mask = b->isComparisonOp() || b->isLogicalOp();
    } else if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(operand)) {
      mask = u->getOpcode() == clang::UO_LNot;
    }
    // Between integers of one width the bits are the value: nothing to do.
    if (!mask && te->isIntegerType() && fe->isIntegerType() &&
        ctx_->getTypeSize(te) == ctx_->getTypeSize(fe)) {
      return true;
    }
    Error(sm.getExpansionLoc(e->getBeginLoc()),
          mask ? kMaskCastMessage : kVectorCastMessage);
    return true;
  }

  // The rewriter's annotate("metal.NAME", ...) attributes; the user's own
  // clang::annotate stay.
  static void DropMetalAnnotations(clang::Decl& d) {
    if (!d.hasAttrs()) return;
    clang::AttrVec& attrs = d.getAttrs();
    attrs.erase(
        std::remove_if(attrs.begin(), attrs.end(),
                       [](const clang::Attr* a) {
                         const auto* annotate =
                             llvm::dyn_cast<clang::AnnotateAttr>(a);
                         return annotate != nullptr &&
                                annotate->getAnnotation().startswith("metal.");
                       }),
        attrs.end());
    if (attrs.empty()) d.dropAttrs();
  }

  bool VisitFunctionDecl(clang::FunctionDecl* f) {
    if (!IsKernel(*f)) {
      // Code generation may emit a top-level function as soon as it sees
      // it: its parameters lose their attributes now.
      for (clang::ParmVarDecl* p : f->parameters()) VisitParmVarDecl(p);
      return true;
    }
    if (!f->hasBody()) return true;
    if (f->isDependentContext() || !seen_.insert(f).second) return true;
    // Kernels get OpenCL's kernel attribute only for clang's checks of
    // threadgroup variables (shim_attributes.h); code generation
    // sees ordinary, mangled functions.
    f->dropAttr<clang::OpenCLKernelAttr>();
    KernelDeclaration k;
    k.name = f->getNameAsString();
    k.ir_name = names_->getName(f);
    k.line = static_cast<int>(
        ctx_->getSourceManager().getPresumedLineNumber(f->getLocation()));
    for (const MetalAttribute& a : MetalAttributesOf(f, *ctx_)) {
      if (a.name == "host_name") {
        k.name = a.text;
      } else if (a.name == "max_total_threads_per_threadgroup" &&
                 !a.integers.empty()) {
        k.max_total_threads_per_threadgroup =
            static_cast<uint32_t>(a.integers[0]);
      } else if (a.name != "kernel") {
        Error(a.location, "unsupported: attribute [[" + a.name +
                              "]] on kernel '" + k.name + "'");
      }
    }
    for (clang::ParmVarDecl* p : f->parameters()) {
      k.parameters.push_back(Parameter(*p, k.name));
      p->dropAttr<clang::AnnotateAttr>();
    }
    AssignImplicitIndices(k.parameters);
    f->dropAttr<clang::AnnotateAttr>();
    out_.kernels.push_back(std::move(k));
    return true;
  }

 private:
  KernelParameter Parameter(const clang::ParmVarDecl& p,
                            const std::string& kernel) {
    KernelParameter out;
    out.name = p.getNameAsString();
    clang::QualType t = p.getType();
    out.type = t.getAsString();
    clang::QualType pointee;
    if (t->isPointerType() || t->isReferenceType()) {
      pointee = t->getPointeeType();
      out.space = SpaceOf(pointee.getAddressSpace());
      if (out.space == isa::AddressSpace::kDevice && IsConstantParameter(p)) {
        out.space = isa::AddressSpace::kConstant;
      }
      out.element = ScalarTypeOf(pointee);
    }
    std::vector<MetalAttribute> attributes = MetalAttributesOf(&p, *ctx_);
    // [[function_constant(c)]] says whether the argument exists; a kernel
    // reads it only where c holds, and an argument it never reads needs no
    // binding. The binding is the other attribute's, or the implicit one.
    std::erase_if(attributes, [](const MetalAttribute& a) {
      return a.name == "function_constant";
    });
    if (attributes.empty()) {
      // Metal gives a buffer or threadgroup pointer without an index the
      // first free one (AssignImplicitIndices).
      if (out.space == isa::AddressSpace::kDevice ||
          out.space == isa::AddressSpace::kConstant) {
        out.kind = ParameterKind::kBuffer;
        return out;
      }
      if (out.space == isa::AddressSpace::kThreadgroup) {
        out.kind = ParameterKind::kThreadgroup;
        return out;
      }
      Error(p.getLocation(),
            "parameter '" + out.name + "' of kernel '" + kernel +
                "' has no Metal attribute (e.g. "
                "[[buffer(0)]] or [[thread_position_in_grid]])");
      return out;
    }
    const MetalAttribute& a = attributes.front();
    if (a.name == "buffer" || a.name == "threadgroup") {
      out.kind = a.name == "buffer" ? ParameterKind::kBuffer
                                    : ParameterKind::kThreadgroup;
      if (a.integers.size() != 1 || a.integers[0] < 0 || a.integers[0] > 30) {
        Error(a.location, "[[" + a.name + "(n)]] on parameter '" + out.name +
                              "' needs an index from 0 to 30");
      } else {
        out.index = static_cast<int>(a.integers[0]);
      }
    } else if (a.name == "texture" || a.name == "sampler") {
      if (!reported_texture_) {
        Error(p.getLocation(),
              "unsupported: textures and samplers (parameter '" + out.name +
                  "' of kernel '" + kernel + "' is [[" + a.name +
                  "]]): mtlemu runs compute kernels on buffers and "
                  "threadgroup memory");
      }
      reported_texture_ = true;
    } else if (IsBuiltinInput(a.name)) {
      out.kind = ParameterKind::kBuiltin;
      out.attribute = a.name;
    } else {
      Error(a.location, "unknown attribute [[" + a.name + "]] on parameter '" +
                            out.name + "' of kernel '" + kernel + "'");
    }
    return out;
  }

  // Buffers and threadgroup pointers declared without an index take, in
  // the order they are declared, the lowest index of their kind that no
  // parameter names explicitly, as Metal assigns them.
  static void AssignImplicitIndices(std::vector<KernelParameter>& params) {
    for (const ParameterKind kind :
         {ParameterKind::kBuffer, ParameterKind::kThreadgroup}) {
      std::set<int> used;
      for (const KernelParameter& p : params) {
        if (p.kind == kind && p.index >= 0) used.insert(p.index);
      }
      int next = 0;
      for (KernelParameter& p : params) {
        if (p.kind != kind || p.index >= 0) continue;
        while (used.count(next)) ++next;
        p.index = next++;
      }
    }
  }

  void Error(clang::SourceLocation loc, const std::string& message) {
    clang::DiagnosticsEngine& d = ci_.getDiagnostics();
    const unsigned id =
        d.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0");
    d.Report(loc, id) << message;
  }

  // Kernels in namespaces too: code generation emits a namespace's
  // functions when it sees the namespace.
  void VisitNow(clang::Decl* d) {
    if (auto* f = llvm::dyn_cast<clang::FunctionDecl>(d)) {
      VisitFunctionDecl(f);
    } else if (llvm::isa<clang::NamespaceDecl>(d) ||
               llvm::isa<clang::LinkageSpecDecl>(d)) {
      for (clang::Decl* inner : llvm::cast<clang::DeclContext>(d)->decls()) {
        VisitNow(inner);
      }
    } else if (llvm::isa<clang::RecordDecl>(d)) {
      // Its fields' and methods' attributes go before code generation uses
      // them (a kernel that reads a field may be emitted next).
      TraverseDecl(d);
    }
  }

  clang::CompilerInstance& ci_;
  FrontendResult& out_;
  std::vector<clang::Decl*> top_level_;
  clang::ASTContext* ctx_ = nullptr;
  std::unique_ptr<clang::ASTNameGenerator> names_;
  std::set<const clang::FunctionDecl*> seen_;
  bool reported_texture_ = false;  // once per compilation
};

// Code generation with the kernel collector running first.
class CompileAction : public clang::EmitLLVMOnlyAction {
 public:
  CompileAction(llvm::LLVMContext* context, FrontendResult& out)
      : EmitLLVMOnlyAction(context), out_(out) {}

 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(
      clang::CompilerInstance& ci, llvm::StringRef file) override {
    std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
    consumers.push_back(std::make_unique<KernelCollector>(ci, out_));
    consumers.push_back(EmitLLVMOnlyAction::CreateASTConsumer(ci, file));
    return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
  }

 private:
  FrontendResult& out_;
};

// Tags the LLVM arguments of the kernels' constant buffers
// (kConstantBufferAttribute), for the optimizers in compiler/air.
void MarkConstantBuffers(FrontendResult& result) {
  for (const KernelDeclaration& k : result.kernels) {
    llvm::Function* f = result.module->getFunction(k.ir_name);
    if (f == nullptr || f->arg_size() != k.parameters.size()) continue;
    for (unsigned i = 0; i < f->arg_size(); ++i) {
      if (k.parameters[i].space == isa::AddressSpace::kConstant) {
        f->addParamAttr(
            i, llvm::Attribute::get(f->getContext(), kConstantBufferAttribute));
      }
    }
  }
}

}  // namespace

FrontendResult::FrontendResult() = default;
FrontendResult::FrontendResult(FrontendResult&&) noexcept = default;
// Not the default: that would give up the old context (its member comes
// first) while the old module still lives in it.
FrontendResult& FrontendResult::operator=(FrontendResult&& other) noexcept {
  if (this == &other) return *this;
  module.reset();
  context = std::move(other.context);
  module = std::move(other.module);
  kernels = std::move(other.kernels);
  errors = std::move(other.errors);
  warnings = std::move(other.warnings);
  skipped_kernels = std::move(other.skipped_kernels);
  return *this;
}
FrontendResult::~FrontendResult() {
  module.reset();  // before its context
}

FrontendResult CompileMsl(std::string_view source, std::string_view file,
                          const CompileOptions& options) {
  const PreprocessedSource preprocessed = Preprocess(source, file, options);
  return CompileMsl(preprocessed, options);
}

namespace {

// A cast's diagnostic (err_bad_cxx_cast_generic: %1 from, %2 to) between
// two vector types.
bool BetweenVectors(const clang::Diagnostic& info) {
  if (info.getNumArgs() < 3) return false;
  for (unsigned i : {1u, 2u}) {
    if (info.getArgKind(i) != clang::DiagnosticsEngine::ak_qualtype) {
      return false;
    }
    const clang::QualType type = clang::QualType::getFromOpaquePtr(
        reinterpret_cast<void*>(info.getRawArg(i)));
    if (!type->isVectorType()) return false;
  }
  return true;
}

// One compilation of the preprocessed text, with the `retry` sites
// rewritten; `found` gets the sites of this attempt's errors that a
// rewrite fixes.
FrontendResult CompileOnce(const PreprocessedSource& preprocessed,
                           const CompileOptions& options,
                           const std::vector<std::string>& only_kernels,
                           const RetrySites& retry, RetrySites& found) {
  FrontendResult result;
  result.context = std::make_unique<llvm::LLVMContext>();
  result.warnings = preprocessed.warnings;
  const RewrittenSource rewritten =
      RewriteMetalAttributes(preprocessed.text, retry, only_kernels);
  result.skipped_kernels = rewritten.skipped_kernels;

  // The main file sits at its own absolute path in memory, the shims under
  // kShimDirectory; everything it included is already in its text.
  const std::string& path = preprocessed.main_path;
  auto memory = ShimFileSystem();
  memory->addFile(path, 0,
                  llvm::MemoryBuffer::getMemBufferCopy(rewritten.text));
  const std::string_view pch = CanUseShimPch(options)
                                   ? EmbeddedShimPch(options.fast_math)
                                   : std::string_view();
  if (!pch.empty()) {
    memory->addFile(kShimPchPath, 0,
                    llvm::MemoryBuffer::getMemBuffer(
                        llvm::StringRef(pch.data(), pch.size()), "", false));
  }
  const auto overlay = OverRealFileSystem(memory);
  std::vector<std::string> args = ArgumentsWithMacros(options);
  // Function constants: each declaration reads __MTLEMU_FC_<index>.
  bool constant_without_value = false;
  for (const RewrittenSource::FunctionConstant& fc :
       rewritten.function_constants) {
    const std::string* value = nullptr;
    for (const auto& [key, v] : options.function_constants) {
      if (key == fc.name || key == std::to_string(fc.index)) value = &v;
    }
    constant_without_value = constant_without_value || value == nullptr;
    args.push_back("-D__MTLEMU_FC_" + std::to_string(fc.index) + "=" +
                   (value ? "(" + *value + ")" : std::string("{}")));
    args.push_back("-D__mtlemu_fc_defined_" + fc.name + "=" +
                   (value ? "1" : "0"));
  }
  // The shims as the PCH has them: the prelude and <metal_stdlib>, whether
  // the source included it or not (preprocessing took its #include away).
  if (!pch.empty()) {
    args.insert(args.end(), {"-include-pch", kShimPchPath});
  } else {
    if (kShimPrelude != nullptr) {
      args.insert(args.end(), {"-include", kShimPrelude});
    }
    args.insert(args.end(), {"-include", kShimPchHeader});
  }
  args.push_back(path);

  const PositionMapper mapper =
      [&](const clang::SourceManager& sm,
          clang::SourceLocation loc) -> std::optional<UserPosition> {
    const auto [fid, offset] = sm.getDecomposedLoc(loc);
    if (fid != sm.getMainFileID()) return std::nullopt;
    return preprocessed.Locate(rewritten.OriginalOffset(offset));
  };
  DiagnosticCollector collector(mapper, result.errors, result.warnings);
  // A function constant without a value is zero (`{}`): what that makes of
  // the code it guards (llama.cpp's `im % FC_mul_mv_ne12`, `switch
  // (FC_OP)`: 1,249 warnings for ggml-metal.metal) says nothing about the
  // user's code, as Metal compiles it before the values are known.
  if (constant_without_value) {
    collector.SetQuietWarnings({clang::diag::warn_remainder_division_by_zero,
                                clang::diag::warn_missing_case_for_condition});
  }
  collector.SetErrorObserver([&](const clang::Diagnostic& info,
                                 const clang::SourceManager& sm,
                                 clang::SourceLocation loc) {
    namespace diag = clang::diag;
    const unsigned id = info.getID();
    std::vector<size_t>* sites = nullptr;
    if (id == diag::err_conditional_ambiguous ||
        id == diag::err_conditional_ambiguous_ovl ||
        id == diag::err_typecheck_cond_incompatible_operands) {
      sites = &found.conditionals;
    } else if (id ==
               diag::err_opencl_scalar_type_rank_greater_than_vector_type) {
      sites = &found.mixed_operators;
    } else if (id == diag::err_bad_cxx_cast_vector_to_vector_different_size ||
               (id == diag::err_bad_cxx_cast_generic && BetweenVectors(info))) {
      sites = &found.vector_casts;
    } else if (id == diag::err_vector_incorrect_num_initializers &&
               info.getNumArgs() > 0 && info.getRawArg(0) == 1) {  // too few
      sites = &found.short_lists;
    } else if (info.getNumArgs() == 1 &&
               info.getArgKind(0) == clang::DiagnosticsEngine::ak_std_string &&
               (info.getArgStdStr(0) == kVectorCastMessage ||
                info.getArgStdStr(0) == kMaskCastMessage)) {
      sites = info.getArgStdStr(0) == kMaskCastMessage ? &found.mask_casts
                                                       : &found.vector_casts;
    } else if (id == diag::err_excess_initializers && info.getNumArgs() > 0 &&
               info.getRawArg(0) == 2) {  // scalar
      sites = &found.vector_constructors;
    } else if (id == diag::err_redefinition ||
               id == diag::err_member_redeclared) {
      sites = &found.redefinitions;
    } else {
      return;
    }
    const auto [fid, offset] = sm.getDecomposedLoc(loc);
    if (fid == sm.getMainFileID()) {
      sites->push_back(rewritten.OriginalOffset(offset));
    }
  });
  clang::CompilerInstance ci;
  if (!PrepareCompiler(ci, collector, args, overlay)) {
    if (result.errors.empty()) {
      result.errors.push_back({preprocessed.files[0].name, 0, 0,
                               "internal error: bad compiler arguments"});
    }
    return result;
  }
  CompileAction action(result.context.get(), result);
  if (ci.ExecuteAction(action) && result.errors.empty()) {
    result.module = action.takeModule();
    // clang's own check of its output would abort the process (the
    // verifier is off in its arguments): a module it makes wrong is an
    // error here.
    std::string broken;
    llvm::raw_string_ostream why(broken);
    if (result.module != nullptr && llvm::verifyModule(*result.module, &why)) {
      why.flush();
      result.errors.push_back(
          {preprocessed.files[0].name, 0, 0,
           "internal compiler error: clang made invalid LLVM IR for this "
           "source: " +
               broken.substr(0, broken.find('\n'))});
    } else {
      MarkConstantBuffers(result);
    }
  }
  if (!result.errors.empty()) result.module.reset();
  return result;
}

}  // namespace

FrontendResult CompileMsl(const PreprocessedSource& preprocessed,
                          const CompileOptions& options,
                          const std::vector<std::string>& only_kernels) {
  if (!preprocessed.ok()) {
    FrontendResult result;
    result.context = std::make_unique<llvm::LLVMContext>();
    result.warnings = preprocessed.warnings;
    result.errors = preprocessed.errors;
    return result;
  }
  // Conditionals between one class in two address spaces, operators
  // between a vector and a scalar of greater rank: compiled again with
  // them rewritten (RetrySites), as Metal's compiler treats them. Clang may
  // report more once the first are fixed (another instantiation gets
  // further, the rest of a statement is instantiated): again while each
  // round finds sites the last did not, up to a bound that no file should
  // reach (each round is a whole compile).
  RetrySites retry;
  for (int round = 0;; ++round) {
    RetrySites found;
    FrontendResult result =
        CompileOnce(preprocessed, options, only_kernels, retry, found);
    if (result.ok() || !retry.Add(found) || round + 1 == kMaxRetryRounds) {
      return result;
    }
  }
}

FrontendResult CompileMslOnce(const PreprocessedSource& preprocessed,
                              const CompileOptions& options,
                              const std::vector<std::string>& only_kernels,
                              const RetrySites& retry, RetrySites& found) {
  if (!preprocessed.ok()) return CompileMsl(preprocessed, options);
  return CompileOnce(preprocessed, options, only_kernels, retry, found);
}

std::string PrintModule(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return text;
}

}  // namespace mtlemu::msl
