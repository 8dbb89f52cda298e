"""The protocol loop on in-memory streams: handshake, requests, errors, end of input."""
import io
import json
import math
import random

import pytest

from dpclaims_core import PROTOCOL, Params, core, make_rng, parse_seed

try:
    import numpy as np  # noqa: F811
except ImportError:  # the package works without numpy; some tests need it
    np = None


@core(metrics=["z2", "score"])
def gauss(params, rng):
    sigma = params["sigma"]
    x = rng.normal(0.0, sigma) if hasattr(rng, "normal") else rng.gauss(0.0, sigma)
    return {"z2": (x / sigma) ** 2, "score": x}


@core(metrics=["x"])
def boom(params, rng):
    return {"x": 1.0 / params["zero"]}


def request(unit="c/main/s/sigma=2/0", seed="9f2c4e1a07b3d655", params=None, options=None):
    return json.dumps(
        {"unit": unit, "seed": seed, "params": params or {"sigma": 2.0}, "options": options or {}}
    )


def serve(c, lines):
    out, err = io.StringIO(), io.StringIO()
    rc = c.serve(io.StringIO("".join(l + "\n" for l in lines)), out, err)
    return rc, [json.loads(l) for l in out.getvalue().splitlines()], err.getvalue()


def test_handshake_request_and_eof():
    rc, answers, _ = serve(gauss, [json.dumps({"protocol": PROTOCOL}), request()])
    assert rc == 0
    assert answers[0] == {"protocol": PROTOCOL, "metrics": ["z2", "score"]}
    m = answers[1]["metrics"]
    assert set(m) == {"z2", "score"} and all(math.isfinite(v) for v in m.values())
    assert m["z2"] == pytest.approx((m["score"] / 2.0) ** 2)


def test_each_answer_is_one_flushed_line():
    class Out(io.StringIO):
        flushes = 0

        def flush(self):
            Out.flushes += 1

    out = Out()
    gauss.serve(io.StringIO(request() + "\n" + request() + "\n"), out, io.StringIO())
    assert out.getvalue().count("\n") == 2 and Out.flushes >= 2


def test_empty_input_and_blank_lines():
    assert serve(gauss, []) == (0, [], "")
    rc, answers, _ = serve(gauss, ["", "   ", request()])
    assert rc == 0 and len(answers) == 1 and "metrics" in answers[0]


@pytest.mark.parametrize(
    "line, words",
    [
        ("not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"unit": "u", "params": {"sigma": 1}}), "no `seed`"),
        (json.dumps({"unit": "u", "seed": "xyz", "params": {}}), "16 hex digits"),
        (json.dumps({"unit": "u", "seed": "1" * 17, "params": {}}), "16 hex digits"),
        (json.dumps({"unit": "u", "seed": "00"}), "no `params`"),
        (json.dumps({"unit": "u", "seed": "00", "params": {}, "options": []}), "`options`"),
        (json.dumps({"protocol": "dpclaims-external/9"}), "dpclaims-external/9"),
    ],
)
def test_malformed_requests_are_protocol_errors(line, words):
    rc, answers, _ = serve(gauss, [line, request()])
    assert rc == 0 and set(answers[0]) == {"error"} and words in answers[0]["error"]
    assert "metrics" in answers[1]  # the loop goes on


def test_an_exception_is_an_error_answer_with_the_traceback_on_stderr():
    rc, answers, err = serve(boom, [request(unit="c/v/s/p/3", params={"zero": 0.0}), request(params={"zero": 4.0})])
    assert rc == 0
    e = answers[0]["error"]
    assert e.startswith("unit c/v/s/p/3: ZeroDivisionError") and "test_loop.py" in e
    assert "Traceback" in err and "ZeroDivisionError" in err
    assert answers[1] == {"unit": "c/main/s/sigma=2/0", "metrics": {"x": 0.25}}


def test_every_answer_echoes_its_unit():
    # dpclaims-external/2: the harness pairs answers with requests by the unit id.
    _, answers, _ = serve(boom, [request(unit="a/1", params={"zero": 2.0}), request(unit="a/2", params={"zero": 0.0})])
    assert [a["unit"] for a in answers] == ["a/1", "a/2"]
    assert "metrics" in answers[0] and "error" in answers[1]


def test_a_missing_parameter_names_the_ones_present():
    _, answers, _ = serve(boom, [request(params={"sigma": 1.0})])
    assert "parameter `zero` is not in the request (it has: sigma)" in answers[0]["error"]


@pytest.mark.parametrize(
    "ret, words",
    [
        ({"x": float("nan")}, "must be finite"),
        ({"x": float("inf")}, "must be finite"),
        ({"y": 1.0}, "not declared"),
        ({"x": "abc"}, "not a number"),
        ([1.0], "not a dict"),
    ],
)
def test_bad_answers_are_errors(ret, words):
    c = core(metrics=["x"])(lambda params, rng: ret)
    _, answers, _ = serve(c, [request()])
    assert words in answers[0]["error"]


def test_options_seed_and_unit_are_passed_when_declared():
    seen = {}

    @core(metrics=["a"])
    def f(params, rng, options, seed, unit):
        seen.update(options=options, seed=seed, unit=unit)
        return {"a": params.int("n")}

    _, answers, _ = serve(f, [request(unit="u/1", seed="00000000000000ff", params={"n": 64.0}, options={"k": "v"})])
    assert answers[0] == {"unit": "u/1", "metrics": {"a": 64.0}}
    assert seen == {"options": {"k": "v"}, "seed": 255, "unit": "u/1"}


def test_params_int_refuses_fractions():
    p = Params(n=64.0, eta=0.5)
    assert p.int("n") == 64 and p.int("absent", 3) == 3
    with pytest.raises(ValueError):
        p.int("eta")


def test_parse_seed():
    assert parse_seed("9f2c4e1a07b3d655") == 0x9F2C4E1A07B3D655
    assert parse_seed("ffffffffffffffff") == 2**64 - 1
    for bad in ["", "g", "1" * 17, None, 1.5, -1, True]:
        with pytest.raises(ValueError):
            parse_seed(bad)


def test_determinism_same_seed_same_metrics():
    a = gauss.run({"sigma": 1.5}, "0123456789abcdef")
    assert a == gauss.run({"sigma": 1.5}, "0123456789abcdef")
    assert a != gauss.run({"sigma": 1.5}, "0123456789abcdee")
    rc, answers, _ = serve(gauss, [request(), request()])
    assert answers[0] == answers[1]


def test_the_rng():
    seed = 0x9F2C4E1A07B3D655
    r = make_rng(seed, "random")
    assert isinstance(r, random.Random) and r.random() == random.Random(seed).random()
    assert make_rng(seed, lambda s: ("mine", s)) == ("mine", seed)
    if np is not None:
        g = make_rng(seed)
        assert isinstance(g, np.random.Generator)
        assert g.standard_normal() == np.random.default_rng(seed).standard_normal()
    with pytest.raises(ValueError):
        make_rng(seed, "mersenne")


def test_the_random_fallback_serves():
    c = core(metrics=["u"], rng="random")(lambda params, rng: {"u": rng.random()})
    _, answers, _ = serve(c, [request()])
    assert answers[0] == {"unit": "c/main/s/sigma=2/0", "metrics": {"u": random.Random(0x9F2C4E1A07B3D655).random()}}


def test_the_decorator_checks_its_metrics():
    for bad in [[], "z2", ["a", "a"], [1]]:
        with pytest.raises(TypeError):
            core(metrics=bad)(lambda params, rng: {})
    with pytest.raises(TypeError):
        core(lambda params, rng: {})
    assert gauss({"sigma": 1.0}, random.Random(1))["z2"] >= 0  # still the function
