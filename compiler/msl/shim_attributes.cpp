#include "compiler/msl/shim_attributes.h"

#include <clang/AST/Attr.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticSema.h>
#include <clang/Sema/ParsedAttr.h>
#include <clang/Sema/Scope.h>
#include <clang/Sema/Sema.h>
#include <clang/Sema/TemplateInstCallback.h>

#include <memory>
#include <vector>

namespace mtlemu::msl {
namespace {

// A GNU attribute the shims put on declarations; it may be on any.
class ShimAttribute : public clang::ParsedAttrInfo {
 protected:
  explicit ShimAttribute(const Spelling& spelling) {
    Spellings = llvm::ArrayRef<Spelling>(&spelling, 1);
  }
  bool diagAppertainsToDecl(clang::Sema&, const clang::ParsedAttr&,
                            const clang::Decl*) const override {
    return true;
  }
};

// `__attribute__((mtlemu_threadgroup_variable))`: on a threadgroup variable
// declared in a kernel's body, makes the kernel an OpenCL kernel for clang's
// checks. Anywhere else (parameters, fields, helpers) it does nothing, and a
// threadgroup variable in a helper function stays clang's error, as in Metal.
class ThreadgroupVariableAttribute : public ShimAttribute {
 public:
  ThreadgroupVariableAttribute() : ShimAttribute(kSpelling) {}

  AttrHandling handleDeclAttribute(clang::Sema& sema, clang::Decl* d,
                                   const clang::ParsedAttr&) const override {
    auto* v = llvm::dyn_cast<clang::VarDecl>(d);
    if (v == nullptr || llvm::isa<clang::ParmVarDecl>(v) ||
        v->getType().getAddressSpace() != clang::LangAS::opencl_local) {
      return AttributeApplied;
    }
    clang::FunctionDecl* f = sema.getCurFunctionDecl();
    if (f == nullptr || !IsKernel(*f)) return AttributeApplied;
    if (!f->hasAttr<clang::OpenCLKernelAttr>()) {
      f->addAttr(clang::OpenCLKernelAttr::CreateImplicit(sema.Context));
    }
    // Metal takes threadgroup variables in any block of a kernel (MLX's
    // sort declares them in `if (ARG_SORT) { ... }`, a reduction in a
    // `case` of a switch); clang's check wants the function's outermost
    // scope. The block's scope counts as one from here to its end; a
    // function scope forgets the loop or switch around it, so it keeps
    // taking `break` and `continue` where it did.
    if (clang::Scope* scope = sema.getCurScope();
        scope != nullptr && !scope->isFunctionScope() &&
        scope->getFnParent() != nullptr) {
      unsigned flags = scope->getFlags() | clang::Scope::FnScope;
      if (scope->getBreakParent() != nullptr) flags |= clang::Scope::BreakScope;
      if (scope->getContinueParent() != nullptr) {
        flags |= clang::Scope::ContinueScope;
      }
      scope->setFlags(flags);
    }
    return AttributeApplied;
  }

 private:
  static constexpr Spelling kSpelling = {clang::ParsedAttr::AS_GNU,
                                         kThreadgroupVariableAttribute.data()};
};

clang::ParsedAttrInfoRegistry::Add<ThreadgroupVariableAttribute> registered(
    kThreadgroupVariableAttribute.data(), "a threadgroup variable");

constexpr char kConstantAnnotation[] = "mtlemu.constant";

// `__attribute__((mtlemu_constant))`: tags a parameter in the constant
// address space (anything else it is on needs no tag).
class ConstantAttribute : public ShimAttribute {
 public:
  ConstantAttribute() : ShimAttribute(kSpelling) {}

  AttrHandling handleDeclAttribute(clang::Sema& sema, clang::Decl* d,
                                   const clang::ParsedAttr&) const override {
    if (llvm::isa<clang::ParmVarDecl>(d)) {
      d->addAttr(clang::AnnotateAttr::CreateImplicit(
          sema.Context, kConstantAnnotation, nullptr, 0));
    }
    return AttributeApplied;
  }

 private:
  static constexpr Spelling kSpelling = {clang::ParsedAttr::AS_GNU,
                                         kConstantAttribute.data()};
};

clang::ParsedAttrInfoRegistry::Add<ConstantAttribute> registered_constant(
    kConstantAttribute.data(), "the constant address space");

// While a kernel template's body is instantiated, the current scope counts
// as a function scope (and as it was afterwards).
class KernelInstantiationScope : public clang::TemplateInstantiationCallback {
 public:
  void initialize(const clang::Sema&) override {}
  void finalize(const clang::Sema&) override {}

  void atTemplateBegin(const clang::Sema& sema,
                       const clang::Sema::CodeSynthesisContext& c) override {
    const auto* f = llvm::dyn_cast_or_null<clang::FunctionDecl>(c.Entity);
    clang::Scope* scope = sema.getCurScope();
    if (c.Kind == clang::Sema::CodeSynthesisContext::TemplateInstantiation &&
        f != nullptr && f->hasAttr<clang::OpenCLKernelAttr>() &&
        scope != nullptr && !scope->isFunctionScope()) {
      saved_.push_back({scope, scope->getFlags()});
      scope->setFlags(scope->getFlags() | clang::Scope::FnScope);
    } else {
      saved_.push_back({nullptr, 0});
    }
  }

  void atTemplateEnd(const clang::Sema&,
                     const clang::Sema::CodeSynthesisContext&) override {
    if (saved_.empty()) return;
    const auto [scope, flags] = saved_.back();
    saved_.pop_back();
    if (scope != nullptr) scope->setFlags(flags);
  }

 private:
  std::vector<std::pair<clang::Scope*, unsigned>> saved_;
};

}  // namespace

bool IsKernel(const clang::FunctionDecl& f) {
  if (f.hasAttr<clang::OpenCLKernelAttr>()) return true;
  for (const auto* a : f.specific_attrs<clang::AnnotateAttr>()) {
    if (a->getAnnotation() == "metal.kernel") return true;
  }
  const clang::FunctionDecl* pattern = f.getTemplateInstantiationPattern();
  return pattern != nullptr && pattern != &f && IsKernel(*pattern);
}

void InstallThreadgroupVariableSupport(clang::Sema& sema) {
  sema.TemplateInstCallbacks.push_back(
      std::make_unique<KernelInstantiationScope>());
}

bool IsConstantParameter(const clang::ParmVarDecl& p) {
  for (const auto* a : p.specific_attrs<clang::AnnotateAttr>()) {
    if (a->getAnnotation() == kConstantAnnotation) return true;
  }
  return false;
}

bool IsShimAttributeNoise(const clang::Diagnostic& info) {
  if (info.getID() != clang::diag::warn_attribute_not_on_decl) return false;
  if (info.getNumArgs() < 1 ||
      info.getArgKind(0) != clang::DiagnosticsEngine::ak_identifierinfo) {
    return false;
  }
  const clang::IdentifierInfo* name = info.getArgIdentifier(0);
  if (name == nullptr) return false;
  const llvm::StringRef n = name->getName();
  return n == llvm::StringRef(kThreadgroupVariableAttribute) ||
         n == llvm::StringRef(kConstantAttribute);
}

}  // namespace mtlemu::msl
