"""`python -m ir_passes.opt --help` raised ValueError: argparse formats help texts with %, and an
option's help said "names without %"."""
import pytest

from ir_passes.opt import main


def test_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--index", "--memory", "--extents", "--no-need", "--launcher", "--helpers", "--mode"):
        assert flag in out
    assert "names without %)" in out
