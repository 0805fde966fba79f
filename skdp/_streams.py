"""Which random stream a release draws from, to tell when two releases share one.

Composition (a ledger's total, a warm-start chain's record) assumes that every fit draws fresh
randomness. Two fits that start from the same generator state draw the same noise: the same
integer ``random_state`` twice, or copies of one ``RandomState`` or ``Generator`` (the clones
``GridSearchCV`` fits). Their releases can then cancel the noise: two fits of one seed on the
same data at epsilon 0.5 and 1 combine into the noiseless model, whatever their composition
claims. So no composition bounds them, and they must not be composed.

A fit's stream is a digest of its generator's state when the fit starts (:func:`stream_state`:
secret, as the seed; held only while the fit runs). What is stored is a keyed digest of it
(:func:`stream_tag`): with the key of the ledger it is charged to (which travels with the ledger
to worker processes), or the process's own key for the warm-start check. A stored tag does not
let anyone test guesses of the seed.
"""

import hashlib
import hmac
import os

#: The key of the tags a fitted model keeps for the warm-start check (this process only).
PROCESS_KEY = os.urandom(32)


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
