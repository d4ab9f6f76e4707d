#include "emu/exec/near_buffer.h"

#include <algorithm>
#include <cstring>

#include "emu/check/finding_set.h"

namespace mtlemu::emu {

Result<OutOfBoundsPolicy> ParseOutOfBoundsPolicy(std::string_view text) {
  if (text == "report") return OutOfBoundsPolicy::kReport;
  if (text == "fault") return OutOfBoundsPolicy::kFault;
  return Error{"unknown out-of-bounds policy '" + std::string(text) +
               "' (report or fault)"};
}

std::string_view OutOfBoundsPolicyName(OutOfBoundsPolicy policy) {
  return policy == OutOfBoundsPolicy::kReport ? "report" : "fault";
}

uint8_t* NearBufferAccess(ExecContext& ctx, const DecodedInstruction& d,
                          isa::AddressSpace space, uint64_t address,
                          uint32_t size, bool is_write, int lane) {
  if (!isa::IsWideAddressSpace(space) || size > sizeof(ctx.near_bytes)) {
    return nullptr;
  }
  const MemoryRegion* r = ctx.device->Nearest(address);
  if (r == nullptr) return nullptr;
  const uint64_t end = address + size;
  if (end < address) return nullptr;  // wraps
  // Within a page before the region's first byte or after its last.
  const uint64_t low =
      r->base >= kNearBufferBytes ? r->base - kNearBufferBytes : 0;
  if (end <= low || address >= r->base + r->length + kNearBufferBytes) {
    return nullptr;
  }
  std::memset(ctx.near_bytes, 0, size);
  if (!is_write) {
    // The bytes of the access that are the region's.
    const uint64_t from = std::max(address, r->base);
    const uint64_t to = std::min(end, r->base + r->length);
    if (from < to) {
      std::memcpy(ctx.near_bytes + (from - address), r->host + (from - r->base),
                  to - from);
    }
  }
  RawFinding f;
  f.kind = FindingKind::kNearBufferAccess;
  f.first.pc = static_cast<uint32_t>(&d - ctx.code);
  f.first.thread = ctx.simdgroup * kLanes + static_cast<uint32_t>(lane);
  f.first.type = is_write ? AccessType::kWrite : AccessType::kRead;
  f.first.threadgroup = ctx.threadgroup_index;
  f.space = space;
  f.address = address;
  f.size = size;
  ctx.near_buffer->Add(f);
  return ctx.near_bytes;
}

}  // namespace mtlemu::emu
