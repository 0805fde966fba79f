"""The data loaders (``skdp.datasets``): file formats, the data directory, the messages.

Most tests write small synthetic files to ``tmp_path``; the ones reading the real files skip
when they are absent (``../shared/data`` or ``SKDP_DATA_DIR``).
"""

import numpy as np
import pytest

import skdp.datasets as datasets
from skdp.datasets import (
    find_data_dir, load_adult, load_adult_frame, load_wine_frame, load_wine_quality,
)

ADULT_FILES = ("adult.data", "adult.test")

ADULT_TRAIN = """\
39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K
38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, White, Male, 0, 0, 40, ?, <=50K

"""
ADULT_TEST = """\
25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, United-States, <=50K.
38, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, Male, 0, 0, 50, United-States, >50K.
"""
#: The first line of UCI's adult.test (not a record).
UCI_TEST_HEADER = "|1x3 Cross validator\n"

WINE_ROWS = [
    [7.0, 0.27, 0.36, 20.7, 0.045, 45, 170, 1.001, 3.0, 0.45, 8.8, 6],
    [6.3, 0.3, 0.34, 1.6, 0.049, 14, 132, 0.994, 3.3, 0.49, 9.5, 6],
    [8.1, 0.28, 0.4, 6.9, 0.05, 30, 97, 0.9951, 3.26, 0.44, 10.1, 5],
    [7.2, 0.23, 0.32, 8.5, 0.058, 47, 186, 0.9956, 3.19, 0.4, 9.9, 7],
]
#: The header row of UCI's winequality-white.csv.
WINE_HEADER = ";".join(f'"{c}"' for c in (
    "fixed acidity", "volatile acidity", "citric acid", "residual sugar", "chlorides",
    "free sulfur dioxide", "total sulfur dioxide", "density", "pH", "sulphates", "alcohol",
    "quality",
))


def _adult_dir(path, test_header):
    path.mkdir()
    (path / "adult.data").write_text(ADULT_TRAIN)
    (path / "adult.test").write_text((UCI_TEST_HEADER if test_header else "") + ADULT_TEST)
    return path


def _wine_dir(path, uci):
    path.mkdir()
    if uci:  # UCI's file: ';', a quoted header row
        lines = [WINE_HEADER] + [";".join(f"{v:g}" for v in r) for r in WINE_ROWS]
    else:  # the bundled copy: ',', no header
        lines = [",".join(f"{v:g}" for v in r) for r in WINE_ROWS]
    (path / "winequality-white.csv").write_text("\n".join(lines) + "\n")
    return path


# -- formats ---------------------------------------------------------------------------------------
@pytest.mark.skipif(find_data_dir(required=ADULT_FILES) is None,
                    reason="Adult files not found (../shared/data or SKDP_DATA_DIR)")
def test_adult_frame_and_array_loaders_agree_on_the_real_files():
    X_tr, y_tr, X_te, y_te = load_adult()
    F_tr, f_tr, F_te, f_te = load_adult_frame()
    assert F_tr.shape[0] == X_tr.shape[0] and F_te.shape[0] == X_te.shape[0]
    np.testing.assert_array_equal(f_tr, y_tr)
    np.testing.assert_array_equal(f_te, y_te)


def test_adult_test_file_with_or_without_uci_header_line(tmp_path):
    plain = load_adult_frame(data_dir=_adult_dir(tmp_path / "plain", test_header=False))
    uci = load_adult_frame(data_dir=_adult_dir(tmp_path / "uci", test_header=True))
    for a, b in zip(plain, uci):
        if hasattr(a, "equals"):
            assert a.equals(b)
        else:
            np.testing.assert_array_equal(a, b)
    X_tr, y_tr, X_te, y_te = plain
    assert X_tr.shape == (3, 14) and X_te.shape == (2, 14)  # the blank last line is no record
    assert X_te["age"].tolist() == [25, 38]  # the first record is kept
    np.testing.assert_array_equal(y_te, [0, 1])
    assert X_tr.loc[2, "native-country"] == "?"  # a missing value stays "?"
    # the array loader reads both files the same way
    arrays = [load_adult(data_dir=tmp_path / name) for name in ("plain", "uci")]
    for a, b in zip(*arrays):
        np.testing.assert_array_equal(a, b)
    assert arrays[0][2].shape[0] == 2


@pytest.mark.parametrize("uci", [False, True], ids=["bundled", "uci"])
def test_wine_frame_reads_uci_and_bundled_formats(tmp_path, uci):
    d = _wine_dir(tmp_path / "wine", uci)
    X_tr, y_tr, X_te, y_te = load_wine_frame(data_dir=d, test_size=0.5, random_state=0)
    X = np.vstack([X_tr, X_te])
    y = np.concatenate([y_tr, y_te])
    rows = np.array(WINE_ROWS)
    order = np.argsort(X[:, 0])
    np.testing.assert_allclose(X[order], rows[np.argsort(rows[:, 0]), :-1])
    np.testing.assert_allclose(y[order], rows[np.argsort(rows[:, 0]), -1])
    # the preprocessed loader too
    assert load_wine_quality(data_dir=d, test_size=0.5)[0].shape == (2, 11)


def test_wine_file_of_the_wrong_shape_is_refused(tmp_path):
    d = tmp_path / "wine"
    d.mkdir()
    (d / "winequality-white.csv").write_text("1,2,3\n4,5,6\n")  # 3 columns
    with pytest.raises(ValueError, match="expected 12"):
        load_wine_frame(data_dir=d)


# -- the data directory ----------------------------------------------------------------------------
@pytest.mark.parametrize("loader, files", [
    (load_adult, ADULT_FILES), (load_adult_frame, ADULT_FILES),
    (load_wine_frame, ("winequality-white.csv",)), (load_wine_quality, ("winequality-white.csv",)),
])
def test_explicit_data_dir_without_the_files_is_not_replaced(tmp_path, loader, files):
    missing = tmp_path / "nonexistent"
    with pytest.raises(FileNotFoundError, match="does not exist") as exc:
        loader(data_dir=missing)
    assert str(missing) in str(exc.value)
    assert all(f in str(exc.value) for f in files)
    assert "archive.ics.uci.edu" in str(exc.value)  # where the files come from
    with pytest.raises(FileNotFoundError, match="lacks"):
        loader(data_dir=tmp_path)  # exists, but empty


def test_find_data_dir_honours_an_explicit_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nonexistent"):
        find_data_dir(tmp_path / "nonexistent")
    d = _adult_dir(tmp_path / "adult", test_header=False)
    assert find_data_dir(d, ADULT_FILES) == d
    (d / "adult.test").unlink()
    with pytest.raises(FileNotFoundError, match=r"lacks adult\.test;"):
        find_data_dir(str(d), ADULT_FILES)
    assert find_data_dir(d) == d  # only adult.data required


def test_data_dir_none_searches_skdp_data_dir(tmp_path, monkeypatch):
    d = _adult_dir(tmp_path / "adult", test_header=True)
    monkeypatch.setenv("SKDP_DATA_DIR", str(d))
    assert find_data_dir(required=ADULT_FILES) == d
    assert load_adult_frame()[2].shape[0] == 2


def test_files_not_found_without_data_dir(monkeypatch):
    monkeypatch.setattr(datasets, "_default_dirs", lambda: [])
    assert find_data_dir(required=ADULT_FILES) is None  # tests skip on None
    with pytest.raises(FileNotFoundError) as exc:
        load_adult_frame()
    # the docs' tests skip a page on a message naming SKDP_DATA_DIR (test_docs.run_page)
    msg = str(exc.value)
    assert "SKDP_DATA_DIR" in msg and "adult.data" in msg and "adult.test" in msg
    assert "comma-separated" in msg and "archive.ics.uci.edu" in msg
    with pytest.raises(FileNotFoundError, match="';'"):
        load_wine_frame()
