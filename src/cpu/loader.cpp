// cpu/loader.cpp — loading the program image through tokens (the driver never writes state).
//
// While not running, JUMP(d) names the image row d to fill (bit 13: read-only data, else code; bits
// 12..7: bank; bits 6..0: row) and restarts the PC step counter; each following VAL(x) is the next
// halfword of that row and advances the counter to n. Halfword n goes into staging slot n−1 (one
// key head per pair of slots, one value half per slot). When the row is complete — 16 halfwords of
// code (8 instructions) or 8 of read-only data (4 words) — the pass reads all staging slots back and
// writes the whole row into its bank.
#include "cpu/machine_builder.h"

namespace rvformer::cpu {

void MachineBuilder::add_loader() {
  circuit::Gates g = gates("load");
  loading_data_ = g.all("data", {circuit::lit(in_.is_val), circuit::nlit(running_)});
  commit_code_ = g.all("commit_code", {circuit::lit(loading_data_), circuit::lit(n_[16]), circuit::nlit(base_[13])});
  commit_rodata_ = g.all("commit_rodata", {circuit::lit(loading_data_), circuit::lit(n_[8]), circuit::lit(base_[13])});

  staged_.assign(kStagingSlots, {});
  for (int slot = 0; slot < kStagingSlots; ++slot)
    for (int i = 0; i < 16; ++i)
      staged_[slot].push_back(c_.add_read_signal("load.staged" + std::to_string(slot) + "[" + std::to_string(i) + "]"));
  for (int head = 0; head < kStagingSlots / 2; ++head) {
    circuit::Bank staging{"staging" + std::to_string(head), 1};
    staging.has_write = staging.has_read = true;
    staging.write.row = {.one_hot = {circuit::kOne}, .binary = {}, .match = {}, .conditions = {F(loading_data_)}};
    staging.read.row.one_hot = {circuit::kOne};
    for (int h = 0; h < 2; ++h) {
      int slot = 2 * head + h;
      staging.write.beta[h] = F(n_[slot + 1]);
      for (int i = 0; i < 16; ++i) {
        staging.write.lanes[h].push_back(F(in_.val[i]));
        staging.read.lanes[h].push_back({{staged_[slot][i], 1}});
      }
    }
    c_.add_bank(std::move(staging));
  }
  for (int s = 0; s < kInstructionsPerRow; ++s)
    legal_flags_.push_back(g.all("legal" + std::to_string(s), {circuit::lit(staged_[2 * s][0]), circuit::lit(staged_[2 * s][1])}));
}

}  // namespace rvformer::cpu
