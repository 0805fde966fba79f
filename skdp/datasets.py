"""Loaders for the real data sets the tests and benchmarks use (UCI Adult, wine quality).

The files are not shipped with the package: they are UCI's (``adult.data``, ``adult.test``,
``winequality-white.csv``). They are looked up in ``data_dir`` when one is given (and nowhere
else), otherwise in the directory named by the environment variable ``SKDP_DATA_DIR``, else in
``../shared/data`` next to the source checkout. Without ``data_dir``, :func:`find_data_dir`
returns None when they cannot be found, so tests can skip cleanly.

Preprocessing (the same for skdp and every anchor in the benchmarks): numeric columns
standardised and categorical ones one-hot encoded, with statistics from the training split, then
every row scaled to unit L2 norm (a stateless, per-row transform). The training-split statistics
are a small leak a real deployment would avoid by using public ranges; the benchmarks document it.
"""

import os
from pathlib import Path

import numpy as np

__all__ = [
    "find_data_dir", "load_adult", "load_wine_quality", "load_adult_frame", "load_wine_frame",
    "ADULT_CATEGORIES", "ADULT_NUMERIC",
]

#: Column names of UCI Adult, in file order (the label "income" last).
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
)
#: The numeric columns of Adult.
ADULT_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
#: The categories of Adult's categorical columns as documented in the data set's description
#: (``adult.names`` of the UCI repository): public information, not read from the records. The
#: missing-value marker "?" is not a category (one-hot encoders ignore it: an all-zero block).
ADULT_CATEGORIES = {
    "workclass": [
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
        "Without-pay", "Never-worked",
    ],
    "education": [
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc",
        "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th",
        "Preschool",
    ],
    "marital-status": [
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
        "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
        "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
        "Armed-Forces",
    ],
    "relationship": [
        "Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried",
    ],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands",
    ],
}

_ADULT_CATEGORICAL = (1, 3, 5, 6, 7, 8, 9, 13)
_ADULT_NUMERIC = (0, 2, 4, 10, 11, 12)


#: What each file is and where it comes from, for the messages of a missing file.
_FILES = {
    "adult.data": "UCI Adult's training records, https://archive.ics.uci.edu/dataset/2/adult: "
                  "15 comma-separated fields a line, the income label last",
    "adult.test": "UCI Adult's test records, as adult.data with labels ending in '.' and UCI's "
                  "first line '|1x3 Cross validator' optional",
    "winequality-white.csv": "UCI Wine Quality's white wines, "
                             "https://archive.ics.uci.edu/dataset/186/wine+quality: 11 features "
                             "then the quality score a line, separated by ';' as in UCI's file "
                             "with its quoted header row, or by ','",
}


def _describe(required):
    return "; ".join(f"{f} ({_FILES[f]})" if f in _FILES else f for f in required)


def _default_dirs():
    """The directories searched without ``data_dir``: ``SKDP_DATA_DIR``, then ``shared/data``
    beside the checkout."""
    dirs = []
    if os.environ.get("SKDP_DATA_DIR"):
        dirs.append(Path(os.environ["SKDP_DATA_DIR"]))
    here = Path(__file__).resolve().parent
    dirs += [here.parent.parent / "shared" / "data", Path.cwd().parent / "shared" / "data",
             Path.cwd().parent.parent / "shared" / "data"]
    return dirs


def find_data_dir(data_dir=None, required=("adult.data",)):
    """The directory holding the data files.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The directory to use. None: the directory named by ``SKDP_DATA_DIR``, else
        ``../shared/data`` next to the source checkout (or the working directory).
    required : tuple of str, default=("adult.data",)
        The file names the directory must hold.

    Returns
    -------
    Path or None
        ``data_dir`` itself when given; otherwise the first directory searched that holds every
        file of ``required``, or None when none does (so that tests can skip).

    Raises
    ------
    FileNotFoundError
        When ``data_dir`` is given and lacks a file of ``required``: an explicit directory is
        never replaced by another one.
    """
    if data_dir is not None:
        d = Path(data_dir)
        missing = [f for f in required if not (d / f).is_file()]
        if missing:
            problem = (f"lacks {', '.join(missing)}" if d.is_dir()
                       else "is not a directory" if d.exists() else "does not exist")
            raise FileNotFoundError(
                f"data_dir {str(d)!r} {problem}; it must be a directory holding "
                f"{_describe(required)}"
            )
        return d
    for c in _default_dirs():
        if all((c / f).is_file() for f in required):
            return c
    return None


def _data_dir(data_dir, required):
    """:func:`find_data_dir`, raising FileNotFoundError when the files are not found."""
    d = find_data_dir(data_dir, required)
    if d is None:
        raise FileNotFoundError(
            f"{', '.join(required)} not found (in SKDP_DATA_DIR or ../shared/data): set "
            f"SKDP_DATA_DIR to a directory holding {_describe(required)}; or pass it as data_dir"
        )
    return d


def _read_adult(path):
    rows = []
    with open(path) as fh:
        for line in fh:
            parts = [p.strip() for p in line.strip().split(",")]
            if len(parts) != 15:
                continue  # blank lines and the test file's header
            rows.append(parts)
    rows = np.array(rows, dtype=object)
    y = np.array([r.rstrip(".") == ">50K" for r in rows[:, 14]], dtype=int)
    return rows[:, :14], y


def _unit_rows(X):
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.maximum(norms, 1e-300)


def load_adult(data_dir=None, normalize_rows=True):
    """UCI Adult: (X_train, y_train, X_test, y_test), label 1 for income > 50K.

    Numeric columns standardised, categoricals one-hot (108 columns in all), rows scaled to unit
    norm when ``normalize_rows``. The files are looked up as :func:`find_data_dir` says
    (FileNotFoundError when they are not there).
    """
    d = _data_dir(data_dir, ("adult.data", "adult.test"))
    raw_tr, y_tr = _read_adult(d / "adult.data")
    raw_te, y_te = _read_adult(d / "adult.test")
    X_tr, X_te = _adult_design(raw_tr, raw_te, normalize_rows=normalize_rows)
    return X_tr, y_tr, X_te, y_te


def _adult_design(raw_tr, raw_te, drop=(), normalize_rows=True):
    """Adult's raw columns but ``drop`` as ``load_adult`` builds them: numeric columns
    standardised on the training file, categoricals one-hot, rows scaled to unit norm when
    ``normalize_rows``. Returns (X_train, X_test)."""
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    num = [c for c in _ADULT_NUMERIC if c not in drop]
    cat = [c for c in _ADULT_CATEGORICAL if c not in drop]
    scaler = StandardScaler().fit(raw_tr[:, num].astype(float))
    enc = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(raw_tr[:, cat])

    def transform(raw):
        X = np.hstack([scaler.transform(raw[:, num].astype(float)), enc.transform(raw[:, cat])])
        return np.ascontiguousarray(_unit_rows(X) if normalize_rows else X)

    return transform(raw_tr), transform(raw_te)


def load_wine_quality(data_dir=None, normalize_rows=True, test_size=0.25, random_state=0):
    """White wine quality: (X_train, y_train, X_test, y_test); y is the quality score (3..9).

    Features standardised with training statistics, rows scaled to unit norm. The file is looked
    up as :func:`find_data_dir` says (FileNotFoundError when it is not there).
    """
    from sklearn.preprocessing import StandardScaler

    X_tr, y_tr, X_te, y_te = load_wine_frame(data_dir, test_size, random_state)
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    if normalize_rows:
        X_tr, X_te = _unit_rows(X_tr), _unit_rows(X_te)
    return X_tr, y_tr, X_te, y_te


def _read_wine(path):
    """The wine quality file as a float array: UCI's (';'-separated, a quoted header row) or
    the same records comma-separated without a header."""
    with open(path) as fh:
        first = fh.readline()
    delimiter = ";" if ";" in first else ","
    header = 0
    try:
        np.array(first.split(delimiter), dtype=float)
    except ValueError:  # the column names
        header = 1
    data = np.loadtxt(path, delimiter=delimiter, skiprows=header, ndmin=2)
    if data.shape[1] != 12:
        raise ValueError(
            f"{path} has {data.shape[1]} columns; expected 12 (11 features then the quality "
            "score), separated by ';' or ','"
        )
    return data


def load_adult_frame(data_dir=None):
    """UCI Adult as raw pandas DataFrames: (X_train, y_train, X_test, y_test).

    The columns as in the files (numeric columns as integers, categorical ones as strings, "?"
    for a missing value), no preprocessing at all; label 1 for income > 50K. For a private
    pipeline, one-hot encode the categorical columns with :data:`ADULT_CATEGORIES` (public).
    The files are looked up as :func:`find_data_dir` says (FileNotFoundError when they are not
    there); UCI's ``adult.test`` and copies without its first line are both read.
    """
    import pandas as pd

    d = _data_dir(data_dir, ("adult.data", "adult.test"))

    def read(path):
        # UCI's adult.test starts with the line "|1x3 Cross validator", other copies (the bundled
        # one) do not: '|' marks a comment (no record holds one) rather than a fixed skiprows
        frame = pd.read_csv(
            path, names=list(ADULT_COLUMNS), skipinitialspace=True, comment="|",
            keep_default_na=False,
        )
        y = (frame.pop("income").str.rstrip(".") == ">50K").astype(int).to_numpy()
        return frame, y

    X_tr, y_tr = read(d / "adult.data")
    X_te, y_te = read(d / "adult.test")
    return X_tr, y_tr, X_te, y_te


def load_wine_frame(data_dir=None, test_size=0.25, random_state=0):
    """White wine quality as raw arrays: (X_train, y_train, X_test, y_test), no preprocessing;
    y is the quality score (3..9).

    The file is looked up as :func:`find_data_dir` says (FileNotFoundError when it is not
    there); UCI's ``winequality-white.csv`` (';'-separated, a header row) and a comma-separated
    copy without the header are both read.
    """
    from sklearn.model_selection import train_test_split

    d = _data_dir(data_dir, ("winequality-white.csv",))
    data = _read_wine(d / "winequality-white.csv")
    X, y = data[:, :-1], data[:, -1]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=random_state)
    return X_tr, y_tr, X_te, y_te
