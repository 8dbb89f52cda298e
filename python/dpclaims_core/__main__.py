"""`python3 -m dpclaims_core CORE [--param k=v ...]`: serve a core, or try one unit.

CORE is `path/to/file.py[:name]` or `module[:name]`; without `:name` the module must
hold exactly one `@core` function. Without --param/--option/--seed the protocol loop runs
on stdin/stdout (so a spec can say `command: ["python3", "-m", "dpclaims_core",
"mycore.py:unit"]`); with them, one unit is computed and its metrics printed as JSON.
"""

import argparse
import importlib
import importlib.util
import json
import os
import sys

from ._core import Core


def load(target):
    path, _, name = target.partition(":")
    if path.endswith(".py") or os.sep in path:
        spec = importlib.util.spec_from_file_location("_dpclaims_user_core", path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"dpclaims_core: cannot load {path}")
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(path)
    if name:
        obj = getattr(mod, name, None)
        if not isinstance(obj, Core):
            raise SystemExit(f"dpclaims_core: {target} is not a @core function")
        return obj
    cores = [v for v in vars(mod).values() if isinstance(v, Core)]
    if len(cores) != 1:
        raise SystemExit(
            f"dpclaims_core: {path} holds {len(cores)} @core functions; name one as {path}:NAME"
        )
    return cores[0]


def _pairs(items, convert):
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep:
            raise SystemExit(f"dpclaims_core: expected name=value, got {item!r}")
        out[k] = convert(v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m dpclaims_core", description=__doc__.split("\n")[0])
    ap.add_argument("core", help="file.py[:name] or module[:name]")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=NUMBER")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--seed", default=None, help="16 hex digits (default 0)")
    args = ap.parse_args(argv)
    c = load(args.core)
    if args.param or args.option or args.seed is not None:
        metrics = c.run(_pairs(args.param, float), args.seed or "0", _pairs(args.option, str))
        print(json.dumps(metrics))
        return 0
    return c.serve()


if __name__ == "__main__":
    sys.exit(main())
