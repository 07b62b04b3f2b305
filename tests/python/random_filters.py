"""Seeded random filters for the connector tests: atoms joined by AND / OR,
sometimes negated (the same shape in every engine's test)."""


def combine(rng, atom, extra=3):
    """atom() joined with 0 .. extra-1 more atoms by AND / OR (NOT 1 in 5)."""
    f = atom()
    for _ in range(int(rng.integers(0, extra))):
        f = f"({f}) {rng.choice(['AND', 'OR'])} {'NOT ' if rng.random() < 0.2 else ''}({atom()})"
    return f


# Floats where engines disagree most: NaN, both zeros, infinities, nulls.
FLOAT_POOL = [float("nan"), -0.0, 0.0, 1.5, -1.5, 2.25, float("inf"), float("-inf"), None]
FLOAT_LITERALS = ["0.0", "-0.0", "1.5", "-1.5", "2.25", "NaN", "Infinity", "-Infinity"]


def float_table(rng, ids, plain=False):
    """Rows `ids` with a float32 column f and a float64 column g drawn from
    FLOAT_POOL; `plain`: g holds no NaN, infinity or null (the file's
    statistics then prune without a NaN count)."""
    import pyarrow as pa

    def draw(lo=0, hi=len(FLOAT_POOL)):
        return FLOAT_POOL[int(rng.integers(lo, hi))]
    return pa.table({
        "id": pa.array(list(ids), pa.int64()),
        "f": pa.array([draw() for _ in ids], pa.float32()),
        "g": pa.array([draw(1, 6) if plain else draw() for _ in ids], pa.float64()),
    })


def float_filter(rng, real, distinct=False, nan_in=True):
    """A random filter over f (the engine's `real` type name) and g (DOUBLE):
    comparisons, IN, BETWEEN, IS [NOT] NULL (and IS DISTINCT FROM) with the
    special values as literals, combined (`nan_in` False: no NaN in IN lists)."""
    def atom():
        c = str(rng.choice(["f", "g"]))
        t = real if c == "f" else "DOUBLE"

        def lit(nan=True):
            pool = FLOAT_LITERALS if nan else [x for x in FLOAT_LITERALS if x != "NaN"]
            return f"CAST('{rng.choice(pool)}' AS {t})"
        k = int(rng.integers(0, 6 if distinct else 5))
        if k == 0:
            return f"{c} IS {rng.choice(['', 'NOT '])}NULL"
        if k == 1:
            return f"{c} IN ({lit(nan_in)}, {lit(nan_in)})"
        if k == 2:
            return f"{c} BETWEEN {lit()} AND {lit()}"
        if k == 5:
            return f"{c} IS DISTINCT FROM {lit()}"
        return f"{c} {rng.choice(['=', '<', '<=', '>', '>=', '<>'])} {lit()}"
    return combine(rng, atom)
