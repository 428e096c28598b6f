"""Where a recorded function lives (records/paths.py), on paths recorded on other machines."""

from __future__ import annotations

from tfdiag.records.paths import OWN_ROOT, is_user_code, normalize_path


def test_tfdiags_own_files_are_its_own_wherever_the_report_was_captured() -> None:
    """A report captured by a tfdiag source checkout elsewhere (another clone, a CI runner's
    workspace) holds its hooks under that checkout: they are tfdiag's, not the user's code.
    Before, only this install's folder was recognised, and `strategy-run-eager`'s fix moved
    with the folder the saved record was read from."""
    here = OWN_ROOT + "capture/callback.py"
    elsewhere = [
        "/builds/ci/tfdiag/tfdiag/capture/callback.py",
        "/home/u/src/tfdiag/capture/callback.py",
        "C:\\work\\tfdiag\\tfdiag\\capture\\callback.py",
    ]
    for path in [here, *elsewhere]:
        assert not is_user_code(path), path
        assert normalize_path(path) == "tfdiag/capture/callback.py", path
    assert normalize_path("/x/tfdiag/keras.py") == "tfdiag/keras.py"


def test_a_users_folder_named_tfdiag_is_still_theirs() -> None:
    for path in ["/home/u/tfdiag/train.py", "/home/u/tfdiag/examples/fit.py"]:
        assert is_user_code(path), path
        assert normalize_path(path) == path
    assert not is_user_code("/venv/lib/python3.11/site-packages/keras/src/trainer.py")


def test_autographs_converted_copy_is_not_the_users_code() -> None:
    """AutoGraph writes a converted copy of a traced function to a temporary file: a
    retracing finding anchored there, or a costly line in it, points at code nobody wrote."""
    assert not is_user_code("/tmp/__autograph_generated_filei1xq2z3c.py")
    assert not is_user_code("C:\\Temp\\__autograph_generated_file9k.py")
    assert is_user_code("/tmp/autograph_notes.py")
