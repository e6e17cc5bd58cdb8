# lit configuration of the HLO text tests: every *.hlo under tests/hlo with RUN lines runs
# through tfjit-opt and FileCheck. corpus/ holds RUN-less modules for the round-trip test.
import lit.formats

config.name = "tfjit-hlo"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".hlo", ".pbtxt"]
config.excludes = ["corpus", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = config.tfjit_src_root
config.test_exec_root = config.tfjit_obj_root

# Whole-word substitutions only, so paths that merely contain "not" stay intact.
def _tool(name):
    return r"(?<![\w/.-])" + name.replace("-", r"\-") + r"(?![\w/.-])"

config.substitutions.append((_tool("tfjit-opt"), config.tfjit_opt))
config.substitutions.append((_tool("FileCheck"), config.filecheck))
config.substitutions.append((_tool("not"), config.not_tool))
