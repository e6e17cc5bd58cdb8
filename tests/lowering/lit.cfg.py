# lit configuration of the lowering text tests: each *.pbtxt with RUN lines is a GraphDef that
# the tfjit CLI compiles with XLA_FLAGS dumps on; FileCheck reads what tf2hlo made of it
# (NN_00_before_optimizations.hlo, the module before any HLO pass) or the LLVM IR the CPU
# backend emitted (*.unoptimized.ll). GraphDef text takes '#' comments, so RUN and CHECK lines
# live in the graph file itself.
import lit.formats

config.name = "tfjit-lowering"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".pbtxt"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = config.tfjit_src_root
config.test_exec_root = config.tfjit_obj_root

# Whole-word substitutions only, so paths that merely contain a tool's name stay intact.
def _tool(name):
    return r"(?<![\w/.-])" + name.replace("-", r"\-") + r"(?![\w/.-])"

config.substitutions.append((_tool("tfjit"), config.tfjit))
config.substitutions.append((_tool("FileCheck"), config.filecheck))
config.substitutions.append((_tool("not"), config.not_tool))
