// Text printer for modules, computations and instructions (the form in HLO.md).
#ifndef TFJIT_COMPILER_HLO_PRINTER_H_
#define TFJIT_COMPILER_HLO_PRINTER_H_

#include <string>

#include "compiler/hlo/module.h"

namespace tfjit::hlo {

struct PrintOptions {
  bool print_metadata = true;
  // Canonical form: names renumbered in post order (p0.., and %i0.. per computation),
  // metadata dropped. Used as the compilation-cache fingerprint.
  bool canonical = false;
  // false: array constants of more than one element print their values as `{...}` (not
  // parseable; for keys that hash the constants' bytes themselves, like the CPU backend's
  // disk cache).
  bool print_literal_values = true;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});
// One line without indentation: "%y = f32[4,8] add(%x, %b), meta={...}".
std::string PrintInstruction(const Instruction& inst, const PrintOptions& options = {});
// Canonical text (see PrintOptions::canonical).
std::string Fingerprint(const Module& module);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_PRINTER_H_
