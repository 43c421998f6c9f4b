"""The words around a committed value: the reader decides only when it knows every one of them.

A word next to the value can change it ('strata 12,0%' is a loss, '22 milyon $' is 22 million, '112,54 je 100
Nennwert' states a price per 100 of face); the reader reads such words only when it knows them. A word within
`_REACH` words before or after the value, in the clause holding it, is *known* when

* the sentence holding the value is English prose (its letters ASCII or Greek, none of its words one the
  lexicon knows only in another language) under an answer line: the line's grammar is known, and an English word
  it has no rule for is prose, not a modifier; without an answer line (`english=True`) the value stands in prose
  that the reader must understand, and an English word is known only in `_PROSE_ENGLISH` (the words the reader's
  grammar reads: verbs and nouns that state a result, cues, approximation, sign, scale, unit and period words,
  'more' of a difference asked, 'either ... or' of alternatives the hedge rules read; not 'down', 'up', 'under',
  'less', 'would', 'should', 'probably', 'using', 'range', nor the nouns of other quantities: a value 'of assets'
  or 'of revenue' is not the value asked); the words that count stop at another number or a comma; or
* it is in the reader's lexicon (`_LEXICON`: function words, answer words, approximation words, units,
  currencies, scale words, sign and increase words, periods, verbs that state the value ('beträgt',
  'beklenir') and the nouns of the quantities asked (price, value, return, rate, correlation) in the languages
  the reader supports); or
* it is a word of the question (stem or options), whose quantity the answer names; or
* it is a symbol: one letter, an acronym in capitals ('IRR', 'WACC'), a Greek letter ('σ', 'ΔQ'), a letter with a
  subscript ('V₀', 'PV₁'), a variable's name ('MacDur'), a function ('ln', 'sqrt', 'max'); or
* it is a run of CJK characters (no spaces) whose edge next to the value is known ('約', '万', '美元'); runs
  farther from the value are not read.

Any other word next to the value defers the answer ("an unknown word next to the value: strata").
"""

from __future__ import annotations

import re

_REACH = 2
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’](?=[^\W\d_])|[\u0900-\u097f])*")  # Devanagari vowel signs too
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ENGLISH = frozenset("the is of and to are for with this that which so we it its was be by an".split())
# words the reader knows (lower case): English answer words, then those of the other languages it supports
_LEXICON_ENGLISH = frozenset("""
    answer final result approximately approx about around roughly nearly circa ca million billion thousand bps
    percent per cent loss gain decline decrease increase falls by of dollar dollars euro euros yen yuan usd eur
    """.split()) | _ENGLISH
_LEXICON_OTHER = frozenset("""
    antwort ergebnis endergebnis der die das ist beträgt betraegt etwa rund ungefähr circa ca also somit von
    prozent mio millionen milliarden mrd eur euro usd
    réponse reponse résultat resultat le la les est de du des environ soit donc vaut
    respuesta resultado el es son de del aproximadamente unos unas alrededor aprox sea por lo tanto
    resposta é de do da cerca aproximadamente portanto
    risposta risultato il lo è di del della circa pari quindi
    antwoord resultaat de het is ongeveer circa dus
    odpowiedź wynik wynosi około
    cevap sonuç yaklaşık olarak
    ответ результат составляет равна равен около примерно
    final finale endgültige zum une un una uno uma um d'environ d’environ environ sera será
    dólares dollari reais euros libras livres sterline евро долларов доллара фунтов pund funtów
    par pro
    en el no na ao
    augmenter augmente augmentation hausse steigt anstieg aumento aumenta aumentar aumentare rialzo artış рост
    mois mês mes monat mese ay месяц месяца месяцев an année ano año jahr anno yıl год
    الإجابة حوالي تقريبا تقريباً النتيجة उत्तर लगभग
    đáp án kết quả khoảng xấp xỉ là cuối cùng
    ergibt damit alltså приблизительно составят составит fue nihai долл dolar
    svar svaret ungefär omkring cirka är odpověď přibližně jawaban sekitar hasil adalah
    preis kurs wert rendite zins prix valeur rendement taux précio precio valor rendimiento tasa preço retorno taxa
    prezzo valore rendimento tasso fiyat fiyatı fiyatta değer getiri faiz цена стоимость доходность ставка
    prijs waarde rendement cena wartość stopa
    beklenir erwartet attendu attendue esperado esperada previsto prevista ожидается verwacht cero zéro null
    korrelation corrélation correlación correlação correlazione korelasyon корреляция
    bei liegt beläuft sich auf sont são sono zijn
    aktie action acción ação azione aandeel
    """.split())
# English words of a value in prose without an answer line (`unknown_word(english=True)`)
_PROSE_ENGLISH = _LEXICON_ENGLISH | frozenset("""
    is are was were be been being equals equal equaling equalling gives give giving gets get got getting comes come
    came works work worked out goes go going went takes take took becomes become became totals total totalling
    amounts amount stands stand reaches reach reached yields yield produces produce results result leaves makes make
    shows show showing that's it's there's there grew grow grows
    value values figure estimate number sum outcome solution conclusion overall net worth
    therefore thus hence then finally these those here my our your their a i i'll i'd we
    close almost just exactly precisely some on at in with from over as into
    negative minus plus positive lost losses lose loses gains gained declines declined decreases decreased
    drop drops dropped fall falls fell rise rises rose increases increased
    points point pp millions billions thousands mn mm bn k
    years year yr yrs months month days day weeks week quarters quarter periods period annual annually annum
    annualized annualised semiannual quarterly monthly share shares unit units contracts contract
    pound pounds gbp jpy
    paid pays pay receives received receive earns earned earn collected collects deposit deposits costs cost
    ln sqrt exp max min cov var corr log
    remains priced today due issue step computed confirmed correct corrected sticking
    she he they her his has have had can will must need needs buy buys bought sell sells sold short long purchase
    additional contributes contribute issues more either or yes possible
    investor investors shareholder shareholders company firm trade trades record records column
    one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred
    """.split())
_LEXICON = _LEXICON_ENGLISH | _LEXICON_OTHER
# words the lexicon knows only in other languages (not also English words: 'die', 'do', 'no'): a line holding one
# is not English prose
_FOREIGN = frozenset(w for w in _LEXICON_OTHER if w.isascii()) - _LEXICON_ENGLISH - frozenset(
    "also an ay die do lo mes no son un par pro action".split())
# CJK has no spaces: a run of CJK characters is known when its end next to the value is one of these
_CJK_KNOWN = tuple("""
    答案 答え 结果 結果 约为 约合 大约 约 約 为 為 是 は で です 대략 약 답 답변
    미국 日元 美元 欧元 英镑 元 円 ドル ユーロ ポンド 달러 유로 파운드 엔 원 万 億 亿 百万 ポイント 입니다
    개월 か月 ヶ月 カ月 个月 個月""".split())


def unknown_word(region: str, start: int, end: int, question: str = "", english: bool = False) -> str:
    """The first word next to the value at region[start:end] (in its sentence) that the reader does not know, or
    ''; `question` is the stem and options, whose words are known; `english`: read English prose too (the value
    was read without an answer line)."""
    line_start = max([region.rfind("\n", 0, start) + 1] + [m.end() for m in _STOP.finditer(region, 0, start)])
    line_end = _sentence_end(region, end)
    before_text, after_text, line = (_TAGS.sub("|", text) for text in (  # '<td>Answer</td><td>¥8,491</td>'
        region[line_start:start], region[end:line_end], region[line_start:line_end]))
    before, after = _words(before_text)[-_REACH:], _words(after_text)[:_REACH]
    prose = _english(line)
    if prose and not english:
        return ""
    if prose:  # in English, words beyond another number ('the €9,400 position: 2/5 × €9,400 = €3,760'), after a
        # comma ('28.79%, compared with the 10% hurdle') or in the next cell qualify another number, clause or cell
        before = _words(re.split(r"\d", before_text)[-1])[-_REACH:]
        after = _words(re.split(r"[,;(|\d]", after_text)[0])[:_REACH]
    known_here = {w.lower() for w in _words(question)} | (_PROSE_ENGLISH if prose else frozenset())
    for i, word in enumerate(reversed(before)):
        if not _known(word, known_here, cjk_edge=(i == 0) and word[-1:] or None):
            return word
    for i, word in enumerate(after):
        if not _known(word, known_here, cjk_edge=(i == 0) and word[:1] or None):
            return word
    return ""


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if any(c.isalpha() for c in w)]


_TAGS = re.compile(r"</?[A-Za-z][\w-]*[^<>]*>")
_STOP = re.compile(r"[.;!?]\s+(?=[^\w\s]*[A-Z])")


def _sentence_end(region: str, end: int) -> int:
    stop = re.compile(r"\n|[.;!?](?:\s|$)").search(region, end)
    return len(region) if stop is None else stop.start()


def _english(line: str) -> bool:
    """A line of ASCII words none of which is a word the lexicon knows only in another language."""
    words = _words(line)
    letters = "".join(c for w in words for c in w if c.isalpha())
    return not re.search(r"[^\x00-\x7f\u0370-\u03ff]", letters) and not {w.lower() for w in words} & _FOREIGN


def _known(word: str, known_here: set[str], cjk_edge: str | None) -> bool:
    """In the lexicon or known here (the question's words); a symbol ('n', 'σ', 'ΔQ', 'IRR', 'V₀', 'MacDur'); a CJK
    run only by its edge next to the value (runs farther away are not read)."""
    lower = word.lower().replace("’", "'")
    if lower in _LEXICON or lower in known_here or len(word) == 1 or re.fullmatch(r"[A-Z]{2,6}s?", word) \
            or re.search(r"[\u0370-\u03ff]", word) or re.fullmatch(r"[^\W\d_]{1,3}[₀-₉]+|(?:[A-Z][a-z]+){2,}", word):
        return True
    if _CJK.search(word):
        return cjk_edge is None or word.endswith(_CJK_KNOWN) or word.startswith(_CJK_KNOWN)
    return False
