import os
import stat

import pytest

from ctxmodes_remote.service.crypto import (
    CiphertextError,
    KeyFileError,
    KeyRing,
    load_or_create_keyring,
    rotate_master_key,
)


def test_tokens_are_fernet_and_open_only_for_their_account():
    ring = KeyRing([os.urandom(32)])
    token = ring.encrypt("acct_a", b"secret")
    assert token.startswith("gAAAAA")
    assert ring.decrypt("acct_a", token) == b"secret"
    with pytest.raises(CiphertextError):
        ring.decrypt("acct_b", token)


def test_another_master_key_cannot_open_a_token():
    old, new = os.urandom(32), os.urandom(32)
    token = KeyRing([old]).encrypt("acct_a", b"secret")
    assert KeyRing([new, old]).decrypt("acct_a", token) == b"secret"
    # The old key dropped: the error names that cause, which the session's user cannot see.
    with pytest.raises(CiphertextError, match=r"master key since dropped from the service's key"):
        KeyRing([new]).decrypt("acct_a", token)


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "not-ascii", "non-string"])
def test_damaged_tokens_are_refused(damage):
    ring = KeyRing([os.urandom(32)])
    token = ring.encrypt("acct_a", b"secret")
    middle = len(token) // 2
    damaged = {
        "flip": token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :],
        "truncate": token[:-4],
        "empty": "",
        "not-ascii": token[:-1] + "é",
        "non-string": 42,
    }[damage]
    with pytest.raises(CiphertextError):
        ring.decrypt("acct_a", damaged)


def test_rotation_keeps_old_tokens_readable(tmp_path):
    old_ring = load_or_create_keyring(tmp_path)
    old_token = old_ring.encrypt("acct_a", b"before")
    assert rotate_master_key(tmp_path) == 2
    new_ring = load_or_create_keyring(tmp_path)
    assert new_ring.key_count == 2
    assert new_ring.decrypt("acct_a", old_token) == b"before"
    new_token = new_ring.encrypt("acct_a", b"after")
    # New tokens use the new key: the old keyring alone cannot open them.
    with pytest.raises(CiphertextError):
        old_ring.decrypt("acct_a", new_token)


def test_key_file_is_owner_only_and_refused_otherwise(tmp_path):
    load_or_create_keyring(tmp_path)
    path = tmp_path / "master.keys"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    with pytest.raises(KeyFileError, match="owner-only"):
        load_or_create_keyring(tmp_path)


def test_malformed_key_file_is_one_clear_error(tmp_path):
    path = tmp_path / "master.keys"
    path.write_text("!!!not base64!!!\n")
    path.chmod(0o600)
    with pytest.raises(KeyFileError):
        load_or_create_keyring(tmp_path)


def test_processes_starting_at_once_in_a_new_directory_share_one_master_key(tmp_path):
    import threading

    # Several service processes started at once on one data directory (and one database):
    # each must use the key the file ends up holding, or the data of one would be wrapped
    # under a key that no longer exists anywhere.
    for attempt in range(30):
        directory = tmp_path / f"d{attempt}"
        directory.mkdir()
        barrier = threading.Barrier(8)
        rings = []

        def start(directory=directory, barrier=barrier, rings=rings):
            barrier.wait()
            rings.append(load_or_create_keyring(directory))

        threads = [threading.Thread(target=start) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        kept = load_or_create_keyring(directory)
        token = kept.encrypt("acct_a", b"secret")
        assert [ring.decrypt("acct_a", token) for ring in rings] == [b"secret"] * 8
        assert sorted(path.name for path in directory.iterdir()) == ["master.keys"]
