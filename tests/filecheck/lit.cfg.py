import os
import sys

import lit.formats

config.name = "ir_passes"
config.test_format = lit.formats.ShTest(False)
config.suffixes = [".ll"]
config.test_source_root = os.path.dirname(__file__)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
config.environment["PYTHONPATH"] = root
config.substitutions.append(("%opt", f"{sys.executable} -m ir_passes.opt"))
config.substitutions.append(("%filecheck", f"{sys.executable} -m filecheck"))
config.substitutions.append(("%runtime", f"{sys.executable} -m ir_passes.runtime"))
config.substitutions.append(("%python", sys.executable))
