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
"""

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
#: be compared with this session's (:func:`foreign_tags`).
KEY_ID = hashlib.sha256(b"skdp stream tag key id:" + PROCESS_KEY).hexdigest()[:12]

#: The fitted object's attribute: the tags (this process's key) of every stream its release
#: drew from, a warm-start chain's earlier fits included.
ATTRIBUTE = "_skdp_streams"


def stream_state(rng):
    """A digest (bytes) of ``rng``'s state: the same for two generators that will draw the same
    numbers. Secret like the seed: pass it to the ledgers, never store it."""
    return hashlib.sha256(repr(rng.bit_generator.state).encode()).digest()


def stream_tags(streams, key):
    """The keyed tags (frozenset of str) of ``streams``: None, one state, or a sequence of
    states (a pipeline's steps)."""
    if streams is None:
        return frozenset()
    if isinstance(streams, bytes):
        streams = (streams,)
    return frozenset(hmac.new(key, s, "sha256").hexdigest()[:32] for s in streams
                     if s is not None)


def object_tags(streams):
    """The tags a fitted object keeps of ``streams``: this process's key, prefixed by its
    :data:`KEY_ID`."""
    return frozenset(f"{KEY_ID}:{tag}" for tag in stream_tags(streams, PROCESS_KEY))


def foreign_tags(tags):
    """The tags among ``tags`` made under another key than this process's (in another Python
    session; or by a version of skdp without key names): nothing tells whether this session's
    streams are theirs."""
    prefix = f"{KEY_ID}:"
    return frozenset(tag for tag in tags if not tag.startswith(prefix))


def remember_streams(obj, streams, earlier=frozenset()):
    """Keep on ``obj`` the tags of ``streams`` (raw states), with ``earlier`` tags; returns the
    tags of ``streams``."""
    tags = object_tags(streams)
    setattr(obj, ATTRIBUTE, frozenset(earlier) | tags)
    return tags


def released_streams(obj):
    """The tags :func:`remember_streams` kept on ``obj`` (empty when none)."""
    return getattr(obj, ATTRIBUTE, frozenset())
