#include "compiler/triton/python/ast.h"

namespace mtlemu::triton::py {

// Each switch lists every enumerator with no default, so a new operator is
// a -Wswitch warning here rather than a silent "?".

const char* Spelling(UnaryOpKind op) {
  switch (op) {
    case UnaryOpKind::kUAdd:
      return "+";
    case UnaryOpKind::kUSub:
      return "-";
    case UnaryOpKind::kNot:
      return "not";
    case UnaryOpKind::kInvert:
      return "~";
  }
  return "?";
}

const char* Spelling(BinOpKind op) {
  switch (op) {
    case BinOpKind::kAdd:
      return "+";
    case BinOpKind::kSub:
      return "-";
    case BinOpKind::kMult:
      return "*";
    case BinOpKind::kMatMult:
      return "@";
    case BinOpKind::kDiv:
      return "/";
    case BinOpKind::kFloorDiv:
      return "//";
    case BinOpKind::kMod:
      return "%";
    case BinOpKind::kPow:
      return "**";
    case BinOpKind::kLShift:
      return "<<";
    case BinOpKind::kRShift:
      return ">>";
    case BinOpKind::kBitOr:
      return "|";
    case BinOpKind::kBitXor:
      return "^";
    case BinOpKind::kBitAnd:
      return "&";
  }
  return "?";
}

const char* Spelling(BoolOpKind op) {
  switch (op) {
    case BoolOpKind::kAnd:
      return "and";
    case BoolOpKind::kOr:
      return "or";
  }
  return "?";
}

const char* Spelling(CmpOpKind op) {
  switch (op) {
    case CmpOpKind::kEq:
      return "==";
    case CmpOpKind::kNotEq:
      return "!=";
    case CmpOpKind::kLt:
      return "<";
    case CmpOpKind::kLtE:
      return "<=";
    case CmpOpKind::kGt:
      return ">";
    case CmpOpKind::kGtE:
      return ">=";
    case CmpOpKind::kIs:
      return "is";
    case CmpOpKind::kIsNot:
      return "is not";
    case CmpOpKind::kIn:
      return "in";
    case CmpOpKind::kNotIn:
      return "not in";
  }
  return "?";
}

}  // namespace mtlemu::triton::py
