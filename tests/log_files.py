"""Small logs written in each format the readers take, shared by the tests of elcvx.io and of
the ``elcvx`` command."""

import gzip
import io as stdio
import json

import numpy as np
import pytest

from elcvx import Sample

pd = pytest.importorskip("pandas")

PMIN = 0.1  # epsilon-greedy over 3 actions with epsilon = 0.3: every action has probability >= 0.1



def make_frame(n=60, seed=0):
    """A small log: 3 actions, epsilon-greedy logging (0.8 / 0.1), a deterministic target."""
    rng = np.random.default_rng(seed)
    greedy = rng.integers(0, 3, n)
    explore = rng.random(n) < 0.3
    action = np.where(explore, rng.integers(0, 3, n), greedy)
    logging = np.where(action == greedy, 0.8, 0.1)
    target = (action == (greedy + 1) % 3).astype(float)
    reward = (rng.random(n) < 0.3 + 0.4 * target).astype(float)
    return pd.DataFrame({
        "x": rng.normal(size=n).round(3), "action": action, "p_log": logging, "p_target": target,
        "click": reward, "w": target / logging, "loss": -reward, "n": rng.integers(1, 4, n),
    })


def write(df, path):
    """Write ``df`` to ``path`` in the format its name says (gzip if it ends in .gz)."""
    name = str(path)
    base = name[:-3] if name.endswith(".gz") else name
    if base.endswith(".parquet"):
        buf = stdio.BytesIO()
        df.to_parquet(buf, index=False)
        data = buf.getvalue()
    elif base.endswith((".jsonl", ".json")):
        data = "".join(json.dumps(r) + "\n" for r in df.to_dict("records")).encode()
    else:
        data = df.to_csv(index=False, sep="\t" if base.endswith(".tsv") else ",").encode()
    if name.endswith(".gz"):
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)
    return path



def expected(df, **kw):
    return Sample.from_probs(df["p_target"].to_numpy(), df["p_log"].to_numpy(),
                             df["click"].to_numpy(), pmin=PMIN, **kw)


def dsjson_events():
    """Seven CB events: one skipped, one with pdrop, one without _label_probability."""
    def ev(i, cost, action, probs, **extra):
        order = [action] + [a for a in (1, 2, 3) if a != action]
        rec = {"_label_cost": cost, "_label_probability": probs[0], "_label_Action": action,
               "_labelIndex": action - 1, "a": order, "p": probs, "EventId": f"ev{i}",
               "Timestamp": "2020-01-01T00:00:00.000Z", "Version": "1",
               "c": {"User": {"f": i}, "_multi": [{"a": 1}, {"a": 2}, {"a": 3}]}}
        rec.update(extra)
        return rec
    events = [
        ev(0, -1.0, 1, [0.8, 0.1, 0.1]),
        ev(1, 0.0, 2, [0.1, 0.8, 0.1]),
        ev(2, -1.0, 3, [0.8, 0.1, 0.1], _skipLearn=True),
        ev(3, -0.5, 2, [0.8, 0.1, 0.1], pdrop=0.5),
        ev(4, 0.0, 1, [0.1, 0.8, 0.1]),
        ev(5, -1.0, 3, [0.8, 0.1, 0.1]),
        ev(6, -1.0, 1, [0.8, 0.1, 0.1]),
    ]
    del events[4]["_label_probability"]  # read from p at the logged action's place in a
    return events


TARGET = [1.0, 0.0, 0.0, 0.5, 1.0, 0.0, 1.0]  # one per event line (the skipped one included)


def write_dsjson(path, events, blank_after=1):
    text = "".join(json.dumps(e) + "\n" + ("\n" if i == blank_after else "") for i, e in enumerate(events))
    path.write_text(text)
    return path
