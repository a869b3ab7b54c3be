"""The token cache of a service process: a token found in storage is recognised without a
lookup for a bounded time, after which a revocation holds; made-up tokens are never kept."""

from ctxmodes_remote.service.accounts import TokenCache, create_token, token_id
from ctxmodes_remote.service.sqlite_storage import SqliteStorage
from ctxmodes_remote.service.storage import Account


class CountingStorage:
    """A storage whose token lookups are counted."""

    def __init__(self, storage: SqliteStorage) -> None:
        self.storage = storage
        self.lookups = 0

    def account_for_token(self, token_hash: str) -> Account | None:
        self.lookups += 1
        return self.storage.account_for_token(token_hash)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _bearer(token: str) -> str:
    return f"Bearer {token}"


def test_a_revoked_token_is_refused_once_the_bound_has_passed(tmp_path):
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    issued = create_token(storage, "alice")
    counting = CountingStorage(storage)
    clock = Clock()
    cache = TokenCache(lifetime_s=2.0, clock=clock)

    assert cache.authenticate(counting, _bearer(issued.token)) == issued.account
    assert cache.cached(_bearer(issued.token)) == issued.account
    assert storage.revoke_token(token_id(issued.token)) == 1
    clock.now += 1.9
    # Within the bound the process may still accept it, without asking storage.
    assert cache.authenticate(counting, _bearer(issued.token)) == issued.account
    assert counting.lookups == 1
    clock.now += 0.1
    assert cache.cached(_bearer(issued.token)) is None
    assert cache.authenticate(counting, _bearer(issued.token)) is None
    assert counting.lookups == 2
    storage.close()


def test_made_up_tokens_are_looked_up_every_time_and_never_kept(tmp_path):
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    counting = CountingStorage(storage)
    cache = TokenCache(size=4, clock=Clock())
    for n in range(50):
        assert cache.authenticate(counting, _bearer(f"made-up-{n % 5}")) is None
    assert counting.lookups == 50
    for header in (None, "", "Basic abc", "Bearer  "):
        assert cache.authenticate(counting, header) is None
    assert counting.lookups == 50
    storage.close()


def test_the_cache_keeps_at_most_its_size_least_recently_used_out_first(tmp_path):
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    tokens = [create_token(storage, name).token for name in ("a", "b", "c")]
    counting = CountingStorage(storage)
    cache = TokenCache(size=2, clock=Clock())
    for token in tokens:
        cache.authenticate(counting, _bearer(token))
    assert counting.lookups == 3
    assert cache.cached(_bearer(tokens[0])) is None
    assert cache.cached(_bearer(tokens[1])) is not None
    assert cache.cached(_bearer(tokens[2])) is not None
    storage.close()
