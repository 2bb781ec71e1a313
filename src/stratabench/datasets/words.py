"""Text made of words: a fixed vocabulary drawn with Zipf weights, seeded.

The cache study's datasets hold prose (an article, comments), and
compression is part of what they measure, so their text must compress the
way real text does: zlib reaches roughly 2.5–4× on it. Random characters
would not compress at all and would make every compression cell
meaningless. Words are drawn from :data:`VOCABULARY` with weights
proportional to ``1 / rank`` (Zipf's law, as in English), lower case, in
sentences of 4 to 22 words that end with sentence punctuation.

Everything here is a pure function of a :class:`random.Random`, and only
``Random.random()`` is used: its sequence for a given integer seed is the one
part of :mod:`random` Python guarantees not to change between versions, so
the same seed gives the same text everywhere.
"""

from __future__ import annotations

import bisect
import itertools
import random

__all__ = ["VOCABULARY", "Words"]

VOCABULARY: tuple[str, ...] = tuple(
    """
    the of and to a in is it you that he was for on are with as his they be at one have this from or had by
    not word but what some we can out other were all there when up use your how said an each she which do
    their time if will way about many then them write would like so these her long make thing see him two
    has look more day could go come did number sound no most people my over know water than call first who
    may down side been now find any new work part take get place made live where after back little only
    round man year came show every good me give our under name very through just form sentence great think
    say help low line differ turn cause much mean before move right boy old too same tell does set three
    want air well also play small end put home read hand port large spell add even land here must big high
    such follow act why ask men change went light kind off need house picture try us again animal point
    mother world near build self earth father head stand own page should country found answer school grow
    study still learn plant cover food sun four between state keep eye never last let thought city tree
    cross farm hard start might story saw far sea draw left late run while press close night real life few
    north open seem together next white children begin got walk example ease paper group always music those
    both mark often letter until mile river car feet care second book carry took science eat room friend
    began idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl
    usual young ready above ever red list though feel talk bird soon body dog family direct pose leave song
    measure door product black short numeral class wind question happen complete ship area half rock order
    fire south problem piece told knew pass since top whole king space heard best hour better true during
    hundred five remember step early hold west ground interest reach fast verb sing listen six table travel
    less morning ten simple several vowel toward war lay against pattern slow center love person money serve
    appear road map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry
    dark machine note wait plan figure star box noun field rest correct able pound done beauty drive stood
    contain front teach week final gave green quick develop ocean warm free minute strong special mind
    behind clear tail produce fact street inch multiply nothing course stay wheel full force blue object
    decide surface deep moon island foot system busy test record boat common gold possible plane stead dry
    wonder laugh thousand ago ran check game shape equate miss brought heat snow tire bring yes distant fill
    east paint language among cache memory server database request instance value result query compress
    """.split()
)
"""About 500 common English words, most frequent first (so ``1 / rank`` weights them like English)."""

# Ends of sentences, with their relative frequency in ordinary prose.
_ENDINGS = (". ",) * 14 + ("? ", "! ")


class Words:
    """Draws words, sentences and text from :data:`VOCABULARY` with one generator.

    Parameters
    ----------
    rng
        The seeded generator; only its ``random()`` method is used.
    """

    def __init__(self, rng: random.Random) -> None:
        self._random = rng.random
        weights = [1.0 / rank for rank in range(1, len(VOCABULARY) + 1)]
        self._cumulative = list(itertools.accumulate(weights))
        self._total = self._cumulative[-1]

    def uniform(self, low: float, high: float) -> float:
        """A float in ``[low, high)``."""
        return low + (high - low) * self._random()

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``, both included."""
        return low + min(high - low, int(self._random() * (high - low + 1)))

    def chance(self, probability: float) -> bool:
        """True with the given probability."""
        return self._random() < probability

    def word(self) -> str:
        """One word, Zipf-weighted."""
        index = bisect.bisect_right(self._cumulative, self._random() * self._total)
        return VOCABULARY[min(index, len(VOCABULARY) - 1)]

    def short_word(self, max_length: int = 8, min_length: int = 1) -> str:
        """A word of ``min_length`` to ``max_length`` characters (tags, handles)."""
        while True:
            word = self.word()
            if min_length <= len(word) <= max_length:
                return word

    def sentence(self) -> str:
        """4 to 22 words, lower case, with an occasional comma and a closing mark and space."""
        count = self.integer(4, 22)
        parts = []
        for index in range(count):
            parts.append(self.word())
            if 0 < index < count - 1 and self.chance(0.06):
                parts[-1] += ","
        return " ".join(parts) + _ENDINGS[self.integer(0, len(_ENDINGS) - 1)]

    def text(self, length: int, *, paragraphs: bool = False) -> str:
        """Whole sentences up to about ``length`` characters, cut at a word boundary.

        The result is at most ``length`` characters and at least a few
        words; with ``paragraphs``, sentences are grouped into paragraphs
        separated by a blank line.
        """
        pieces: list[str] = []
        size = 0
        in_paragraph = 0
        while size < length:
            sentence = self.sentence()
            if paragraphs and in_paragraph >= 4 and self.chance(0.25):
                pieces[-1] = pieces[-1].rstrip() + "\n\n"
                in_paragraph = 0
            pieces.append(sentence)
            size += len(sentence)
            in_paragraph += 1
        text = "".join(pieces)[:length]
        cut = text.rfind(" ")
        if len(text) == length and cut > 0:
            text = text[:cut]
        return text.rstrip()

    def phrase(self, low: int, high: int) -> str:
        """Words joined by spaces, between ``low`` and ``high`` characters long (a title)."""
        target = self.integer(low, high)
        words = [self.word()]
        while len(" ".join(words)) < target:
            words.append(self.word())
        text = " ".join(words)
        while len(text) > high and len(words) > 1:
            words.pop()
            text = " ".join(words)
        while len(text) < low:
            text += " " + self.short_word(max(1, min(8, high - len(text) - 1)))
        return text[:high]

    def handle(self, low: int, high: int) -> str:
        """A user name of ``low`` to ``high`` characters: words run together and digits."""
        target = self.integer(low, high)
        name = self.short_word(6, 3)
        while len(name) < target:
            name += self.short_word(6, 3) if self.chance(0.6) else str(self.integer(0, 99))
        return name[:target] if len(name) > high else name
