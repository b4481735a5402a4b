"""Memo: remembered answers, all forgotten once the memo is full."""

from fakeapi.machinery.memo import Memo


def test_keep_returns_the_value_and_lookups_are_the_dicts() -> None:
    memo: Memo[str, int] = Memo(3)
    assert memo.keep("a", 1) == 1
    assert memo.get("a") == 1 and "a" in memo and memo.get("b") is None


def test_a_full_memo_forgets_everything_before_keeping_the_next() -> None:
    memo: Memo[int, int] = Memo(3)
    for n in range(3):
        memo.keep(n, n * 10)
    assert dict(memo) == {0: 0, 1: 10, 2: 20}
    memo.keep(3, 30)
    assert dict(memo) == {3: 30}
    memo.keep(3, 31)  # a key kept again replaces its answer
    assert dict(memo) == {3: 31}
