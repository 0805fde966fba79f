"""Which random stream a release draws from, to tell when two releases share one.

Composition (a ledger's total, a warm-start chain's record) assumes that every fit draws fresh
randomness. Two fits that start from the same generator state draw the same noise: the same
integer ``random_state`` twice, or copies of one ``RandomState`` or ``Generator`` (the clones
``GridSearchCV`` fits). Their releases can then cancel the noise: two fits of one seed on the
same data at epsilon 0.5 and 1 combine into the noiseless model, whatever their composition
claims. So no composition bounds them, and they must not be composed.

A fit's stream is a digest of its generator's state when the fit starts (:func:`stream_state`:
secret, as the seed; held only while the fit runs). What is stored is a keyed digest of it
(:func:`stream_tags`): with the key of the ledger it is charged to (which travels with the ledger
to worker processes), or with the process's key (:data:`PROCESS_KEY`, shared with the
processes it starts) on the fitted object itself (:data:`ATTRIBUTE`, for warm starts and
:func:`skdp.compose`). Without the key, a stored tag does not let anyone test guesses of the
seed (a pickled model carries its tags, never the key).

Tags made under two keys cannot be compared (an object fitted in another Python session and
unpickled here, whose key died with that session). Two streams of which one drew fresh entropy
(``random_state=None``: :func:`make_generator` reads the operating system's) are distinct
without a comparison, so a fresh stream's tag says so (:data:`FRESH`); two *seeded* streams
tagged under different keys may be one (the same script run twice), and nothing bounds their
composition. :func:`compare_streams` decides this for two sets of tags, :func:`first_conflict`
for many; the ledgers, :func:`skdp.compose` and the warm-start check all use them.
"""

import functools
import hashlib
import hmac
import os

#: The environment variable that hands the key of :data:`PROCESS_KEY` to child processes
#: (joblib's workers, a LocalCluster's), so that the tags of objects fitted there compare.
KEY_VARIABLE = "SKDP_STREAM_TAG_KEY"


def _process_key():
    try:
        key = bytes.fromhex(os.environ[KEY_VARIABLE])
    except (KeyError, ValueError):
        key = b""
    if len(key) != 32:
        key = os.urandom(32)
        os.environ[KEY_VARIABLE] = key.hex()
    return key


#: The key of the tags a fitted object keeps (this process and the processes it starts).
PROCESS_KEY = _process_key()

#: A public name of :data:`PROCESS_KEY` (a digest of it, which tells nothing of the key, hence
#: of the seeds): the prefix of the tags a fitted object keeps, so that tags made under another
#: key (an object fitted in another Python session and unpickled) are known as such: they cannot
#: be compared with this session's (:func:`compare_streams`).
KEY_ID = hashlib.sha256(b"skdp stream tag key id:" + PROCESS_KEY).hexdigest()[:12]

#: What marks a fresh stream: the prefix of its raw state (:func:`stream_state`) and a part of
#: its tag (``"<KEY_ID>:fresh:<digest>"``; a seeded stream's is ``"<KEY_ID>:<digest>"``).
FRESH = "fresh"
_FRESH_STATE = FRESH.encode() + b":"

#: What :func:`compare_streams` answers: a tag in both (one stream, for certain) ...
SHARED = "shared"
#: ... or seeded streams tagged under different keys (nothing tells whether they are one).
UNVERIFIED = "unverified"

#: The fitted object's attribute: the tags (this process's key) of every stream its release
#: drew from, a warm-start chain's earlier fits included.
ATTRIBUTE = "_skdp_streams"


def stream_state(rng, seeded=True):
    """A digest (bytes) of ``rng``'s state: the same for two generators that will draw the same
    numbers. Secret like the seed: pass it to the ledgers, never store it.

    ``seeded``: whether ``rng`` was made from a ``random_state`` (an integer, a ``RandomState``
    or a ``Generator``: ``random_state is not None``). False marks the state fresh (drawn from
    the operating system's entropy, which no other fit repeats), so that its tags need no
    comparison with tags of another key."""
    digest = hashlib.sha256(repr(rng.bit_generator.state).encode()).digest()
    return digest if seeded else _FRESH_STATE + digest


def _digests(streams, key):
    """(raw state, its keyed digest) of each of ``streams``: None, one state, or a sequence of
    states (a pipeline's steps; None entries skipped)."""
    if streams is None:
        return ()
    if isinstance(streams, bytes):
        streams = (streams,)
    return tuple((s, hmac.new(key, s, "sha256").hexdigest()[:32]) for s in streams
                 if s is not None)


def stream_tags(streams, key):
    """The keyed tags (frozenset of str) of ``streams``: None, one state, or a sequence of
    states (a pipeline's steps)."""
    return frozenset(tag for _, tag in _digests(streams, key))


def object_tags(streams):
    """The tags a fitted object keeps of ``streams`` (None, one raw state or a sequence of
    them): this process's key, prefixed by its :data:`KEY_ID`, a fresh stream's marked so."""
    return frozenset(
        f"{KEY_ID}:{FRESH + ':' if s.startswith(_FRESH_STATE) else ''}{tag}"
        for s, tag in _digests(streams, PROCESS_KEY))


@functools.lru_cache(maxsize=16384)  # (a ledger rescans its charges' tag sets at every charge)
def _keys_of(tags):
    keys = set()
    for tag in tags:
        key, sep, rest = tag.partition(":")
        if not sep or len(key) != 12:
            keys.add(tag)
        elif not rest.startswith(FRESH + ":"):
            keys.add(key)
    return frozenset(keys)


def _seeded_keys(tags):
    """The keys (their :data:`KEY_ID`) under which ``tags`` name seeded streams. A tag without
    a key name (a version of skdp before them; a ledger's own tag standing for an unknown one)
    is its own key: it compares with nothing but itself."""
    return _keys_of(frozenset(tags)) if tags else frozenset()


def compare_streams(a, b):
    """Whether the releases whose streams are tagged ``a`` and ``b`` may draw the same noise.

    :data:`SHARED` when a tag is in both: one stream. :data:`UNVERIFIED` when each has a seeded
    stream and the two cannot be compared (tags under different keys: one of them, or both,
    fitted in another Python session): the same seed in the same script gives the same noise
    in any session, and nothing tells. None otherwise: every stream of one is compared with
    every seeded stream of the other under one key, or one of them is fresh (its tag says so;
    tags of an skdp that did not mark them count as seeded). In both first cases no composition
    bounds the two releases.
    """
    if a & b:
        return SHARED
    keys_a, keys_b = _seeded_keys(a), _seeded_keys(b)
    if keys_a and keys_b and len(keys_a | keys_b) > 1:
        return UNVERIFIED
    return None


def first_conflict(tag_sets, groups=None):
    """``(i, j, kind)``: the first pair ``i < j`` (least ``j``, then least ``i``) of ``tag_sets``
    that :func:`compare_streams` flags (``kind``), or None.

    ``groups`` (aligned with ``tag_sets``; None: no groups): two sets of one group other than
    None are compared otherwise (the charges of one ledger, by the ledger's own key), so only a
    tag in both flags them. Linear in the number of tags times that of distinct key sets.
    """
    first_of_tag = {}  # tag -> the first position that holds it
    first_of_kind = {}  # (group, its seeded keys) -> the first position with them
    for j, tags in enumerate(tag_sets):
        if not tags:
            continue
        group = None if groups is None else groups[j]
        keys = _seeded_keys(tags)
        shared = unverified = None
        for t in tags:
            i = first_of_tag.get(t)
            if i is not None and (shared is None or i < shared):
                shared = i
        if keys:
            for (other_group, other), i in first_of_kind.items():
                # two non-empty key sets whose union has two keys or more
                if ((other_group is None or other_group != group)
                        and (len(keys) > 1 or keys != other)
                        and (unverified is None or i < unverified)):
                    unverified = i
        if shared is not None or unverified is not None:
            if unverified is None or (shared is not None and shared <= unverified):
                return shared, j, SHARED
            return unverified, j, UNVERIFIED
        for t in tags:
            first_of_tag.setdefault(t, j)
        if keys:
            first_of_kind.setdefault((group, keys), j)
    return None


def remember_streams(obj, streams, earlier=frozenset()):
    """Keep on ``obj`` the tags of ``streams`` (raw states), with ``earlier`` tags; returns the
    tags of ``streams``."""
    tags = object_tags(streams)
    setattr(obj, ATTRIBUTE, frozenset(earlier) | tags)
    return tags


def released_streams(obj):
    """The tags :func:`remember_streams` kept on ``obj`` (empty when none)."""
    return getattr(obj, ATTRIBUTE, frozenset())
