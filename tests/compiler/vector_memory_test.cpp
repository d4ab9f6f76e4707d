// MergeVectorAccesses (compiler/air/vector_memory.h) on kernels written as
// ISA text whose register numbers stand for virtual registers: which
// element accesses become one vector access, and which must stay apart.
#include "compiler/air/vector_memory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/printer.h"

namespace mtlemu::air {
namespace {

struct Merged {
  isa::Kernel kernel;
  RegisterParts parts;
  std::vector<std::string> lines;  // the code, printed
};

// Assembles `body` into a kernel with a device buffer in u0 and merges it;
// new blocks are numbered from r100.
Merged Merge(const std::string& body) {
  const std::string text =
      ".kernel k\n.buffer 0 u0 device float p\n.threadgroup_memory 1024\n" +
      body + "    exit\n.end\n";
  isa::AssembleResult a = isa::Assemble(text, "test.s");
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.diagnostics[0].message);
  Merged m;
  if (a.module.kernels.empty()) return m;
  m.kernel = a.module.kernels[0];
  uint32_t next = 100;
  MergeVectorAccesses(m.kernel, m.parts, [&] { return next++; });
  for (const isa::Instruction& inst : m.kernel.code) {
    m.lines.push_back(isa::PrintInstruction(inst, m.kernel));
  }
  return m;
}

TEST(VectorMemory, FourElementLoadsBecomeOneWhoseElementsArePartsOfABlock) {
  const Merged m = Merge(R"(
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.f32 r1, [u0 + r0*16]
    ld.device.f32 r2, [u0 + r0*16 + 4]
    ld.device.f32 r3, [u0 + r0*16 + 8]
    ld.device.f32 r4, [u0 + r0*16 + 12]
    add.f32 r5, r1, r4
)");
  ASSERT_EQ(m.lines.size(), 4u);
  EXPECT_EQ(m.lines[1], "ld.device.v4.f32 r100, [u0 + r0*16]");
  for (uint32_t e = 0; e < 4; ++e) {
    EXPECT_EQ(m.parts.Resolve(1 + e), (std::pair<uint32_t, int>{100, e}));
  }
}

TEST(VectorMemory, StoreOfLoadedElementsReadsTheBlockInPlace) {
  const Merged m = Merge(R"(
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.f32 r1, [u0 + r0*8]
    ld.device.f32 r2, [u0 + r0*8 + 4]
    st.threadgroup.f32 [r0*8], r1
    st.threadgroup.f32 [r0*8 + 4], r2
)");
  ASSERT_EQ(m.lines.size(), 4u);
  EXPECT_EQ(m.lines[1], "ld.device.v2.f32 r100, [u0 + r0*8]");
  // r1 is part 0 of r100: the store reads r100's two registers from there.
  EXPECT_EQ(m.lines[2], "st.threadgroup.v2.f32 [r0*8], r1");
}

TEST(VectorMemory, StoreOfComputedValuesMakesThemABlock) {
  const Merged m = Merge(R"(
    mov.u32 r0, %thread_position_in_grid.x
    mov.f32 r1, 1.0
    mov.f32 r2, 2.0
    mov.f32 r3, 3.0
    st.device.f32 [u0 + r0*16 + 32], r1
    st.device.f32 [u0 + r0*16 + 36], r2
    st.device.f32 [u0 + r0*16 + 40], r3
)");
  ASSERT_EQ(m.lines.size(), 6u);
  EXPECT_EQ(m.lines[4], "st.device.v3.f32 [u0 + r0*16 + 32], r100");
  EXPECT_EQ(m.parts.Resolve(3), (std::pair<uint32_t, int>{100, 2}));
}

TEST(VectorMemory, AccessesThatMustStayApart) {
  struct Case {
    const char* what;
    const char* body;
  };
  for (const Case& c : {
           Case{"a gap between the elements", R"(
    ld.device.f32 r1, [u0 + r0*16]
    ld.device.f32 r2, [u0 + r0*16 + 8]
)"},
           Case{"another index", R"(
    ld.device.f32 r1, [u0 + r0*16]
    ld.device.f32 r2, [u0 + r9*16 + 4]
)"},
           Case{"another address space", R"(
    ld.device.f32 r1, [u0 + r0*4]
    ld.constant.f32 r2, [u0 + r0*4 + 4]
)"},
           Case{"a label between them", R"(
    ld.device.f32 r1, [u0 + r0*16]
here:
    ld.device.f32 r2, [u0 + r0*16 + 4]
)"},
           Case{"a loaded value feeds the next address", R"(
    ld.device.u32 r0, [u0 + r0*4]
    ld.device.u32 r2, [u0 + r0*4 + 4]
)"},
           Case{"one value stored twice", R"(
    mov.f32 r1, 1.0
    st.device.f32 [u0 + r0*8], r1
    st.device.f32 [u0 + r0*8 + 4], r1
)"},
           Case{"a value written twice", R"(
    mov.f32 r1, 1.0
    mov.f32 r2, 2.0
    mov.f32 r2, 3.0
    st.device.f32 [u0 + r0*8], r1
    st.device.f32 [u0 + r0*8 + 4], r2
)"},
           Case{"64-bit elements", R"(
    ld.device.u64 r2, [u0 + r0*16]
    ld.device.u64 r4, [u0 + r0*16 + 8]
)"},
       }) {
    const Merged m =
        Merge(std::string("    mov.u32 r0, %thread_index_in_threadgroup\n"
                          "    mov.u32 r9, 7\n") +
              c.body);
    for (const std::string& line : m.lines) {
      EXPECT_EQ(line.find(".v"), std::string::npos) << c.what << ": " << line;
    }
  }
}

}  // namespace
}  // namespace mtlemu::air
