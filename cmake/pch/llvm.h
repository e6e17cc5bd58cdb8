// Precompiled header for the targets that see LLVM's headers (backends/llvm, backends/cpu;
// cmake/pch.cmake): the library one plus the LLVM IR headers they all include.
#include "cmake/pch/common.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
