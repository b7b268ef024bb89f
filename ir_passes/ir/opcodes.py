"""Families of LLVM opcodes, as the parser, the printer and the transforms group them."""

BINARY = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or",
          "xor", "fadd", "fsub", "fmul", "fdiv", "frem"}
CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
         "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}
TERMINATORS = {"ret", "br", "switch", "unreachable", "indirectbr", "invoke", "resume"}
