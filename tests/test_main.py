"""The command line, ``python -m skdp``: its arguments and help (the demo's fits are not run)."""

import pytest

from skdp.__main__ import main


@pytest.mark.parametrize("value", ["0", "-1", "2.5", "many"])
def test_seeds_below_one_or_not_an_integer_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--seeds", value])
    assert exc.value.code == 2  # argparse's usage error, before any data is loaded
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m skdp")
    assert "argument --seeds: must be a positive integer" in err and value in err
    assert "Traceback" not in err


def test_help_is_plain_text(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "fit every estimator with every available optimizer" in out
    assert "--seeds" in out
    assert "``" not in out and ":func:" not in out  # no reST markup
