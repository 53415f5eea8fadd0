// engine/packed_matrix.cpp — see packed_matrix.h.
#include "engine/packed_matrix.h"

#include <algorithm>

namespace rvformer::engine {

PackedMatrix::PackedMatrix(std::size_t rows, std::size_t cols)
    : rows_(rows), cols_(cols), panels_((rows + panel_rows - 1) / panel_rows * panel_rows * cols, 0.0f) {}

void PackedMatrix::set_row(std::size_t row, std::span<const float> values) {
  float* panel = panels_.data() + (row / panel_rows) * panel_rows * cols_ + row % panel_rows;
  for (std::size_t col = 0; col < cols_; ++col) panel[col * panel_rows] = values[col];
}

void PackedMatrix::copy_row(std::size_t row, std::span<float> out) const {
  const float* panel = panels_.data() + (row / panel_rows) * panel_rows * cols_ + row % panel_rows;
  for (std::size_t col = 0; col < cols_; ++col) out[col] = panel[col * panel_rows];
}

void PackedMatrix::multiply(std::span<const float> x, std::span<float> y) const {
  const float* panel = panels_.data();
  for (std::size_t first = 0; first < rows_; first += panel_rows, panel += panel_rows * cols_) {
    float sums[panel_rows] = {};  // +0, see the header
    for (std::size_t col = 0; col < cols_; ++col) {
      const float value = x[col];
      const float* weights = panel + col * panel_rows;
      for (std::size_t lane = 0; lane < panel_rows; ++lane) sums[lane] += weights[lane] * value;
    }
    std::copy_n(sums, std::min(panel_rows, rows_ - first), y.begin() + static_cast<std::ptrdiff_t>(first));
  }
}

}  // namespace rvformer::engine
