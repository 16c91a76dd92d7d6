package textproc

// The word lists of DetectLanguage. Function words come from the analyzer's stop lists; the
// additions are what those lists leave out on purpose (negations, which the index keeps as
// terms), chat spellings operators type, and a small lexicon of operator vocabulary that is
// clearly one language's. Words are written in plain spelling and folded like the stop lists.

var englishDetectExtra = []string{
	"not", "no", "dont", "doesnt", "didnt", "wont", "cant", "cannot", "isnt", "arent", "wasnt",
	"werent", "havent", "hasnt", "couldnt", "shouldnt", "wouldnt", "thats", "theres", "its",
	"pls", "plz", "u", "ur", "thx", "says", "said", "asks", "asked", "anyone", "nobody", "now",
	"wants", "left", "right", "back", "after", "again", "yet", "due",
}

// englishLexicon is operator vocabulary that is English only; its words also count as parts of
// compounds ("handbrake", "headlight").
var englishLexicon = []string{
	"customer", "cust", "car", "phone", "key", "keys", "tyre", "tire", "flat", "windscreen",
	"windshield", "scratch", "scratched", "dent", "damage", "damaged", "crash", "accident",
	"battery", "charger", "charging", "fine", "ticket", "speeding", "towed", "tow", "booking",
	"refund", "fuel", "petrol", "wallet", "boot", "trunk", "seat", "door", "lock", "locked",
	"unlock", "open", "broken", "stuck", "died", "dead", "lost", "dirty", "smoke", "smell",
	"smells", "police", "driver", "drive", "driving", "trip", "rental", "cancel", "help", "hurt",
	"injured", "missing", "working", "light", "warning", "brake", "brakes", "mirror", "window",
	"engine", "hair", "spilled", "parked", "parking", "call", "photo", "photos", "stolen",
}

var germanDetectExtra = []string{
	"nicht", "nich", "nciht", "kein", "keine", "keinen", "keiner", "keinem", "nix", "ist",
	"tun", "sagt", "meint", "gehts", "gibts", "nen", "ne", "grad", "sofort", "mehr", "kommt",
	"steht", "zeigt", "springt", "funktioniert", "geklappt", "möchte", "bekommen", "wegen",
	"hallo", "danke", "fuer",
}

// germanLexicon is operator vocabulary that is German only; its words also count as parts of
// compounds ("Reifenpanne", "Unfallgegner").
var germanLexicon = []string{
	"kunde", "kundin", "kunden", "karre", "wagen", "auto", "fahrzeug", "handy", "schlüssel",
	"reifen", "platt", "scheibe", "tür", "kratzer", "delle", "schaden", "unfall", "panne", "akku",
	"batterie", "ladesäule", "ladekabel", "strafzettel", "knöllchen", "blitzer", "bußgeld",
	"polizei", "abgeschleppt", "abschleppen", "tanken", "getankt", "tankkarte", "sprit",
	"fundsache", "vergessen", "verloren", "kaputt", "geklaut", "gestohlen", "buchung", "fahrt",
	"fahrer", "fahren", "miete", "rechnung", "geld", "zurück", "dreck", "schmutzig", "verletzt",
	"bremse", "warnleuchte", "spiegel", "fenster", "kofferraum", "sitz", "hund", "rauch", "raus",
	"leer", "voll", "hilfe", "frage", "anruf", "foto", "fotos", "motorhaube",
}

// detectIgnored are words of the lists above or of the stop lists that operators write in both
// languages, or that are German words and common English ones: they are no evidence.
var detectIgnored = []string{"die", "er", "um", "hi", "ok", "okay", "hin", "so", "also", "in",
	"am", "an", "was", "will", "fast", "rest", "start", "app", "taxi", "bus", "park", "test", "info", "stop", "team", "tank", "kind", "alt",
	"arm", "hand", "gift", "bald", "fit", "best"}

var detectEnglish, detectGerman, detectShared = detectSets()

// englishParts and germanParts are the lexicon words that may begin or end a compound.
var englishParts, germanParts = partSet("en", englishLexicon), partSet("de", germanLexicon)

func detectSets() (en, de, shared map[string]struct{}) {
	en = stopSet("en", append(englishDetectExtra, englishLexicon...)...)
	for w := range englishStop {
		en[w] = struct{}{}
	}
	de = stopSet("de", append(germanDetectExtra, germanLexicon...)...)
	for w := range germanStop {
		de[w] = struct{}{}
	}
	shared = map[string]struct{}{}
	for w := range en {
		if _, ok := de[w]; ok {
			shared[w] = struct{}{}
		}
	}
	for w := range stopSet("en", detectIgnored...) {
		shared[w] = struct{}{}
	}
	for w := range stopSet("de", detectIgnored...) {
		shared[w] = struct{}{}
	}
	for w := range shared {
		delete(en, w)
		delete(de, w)
	}
	return en, de, shared
}

// partSet is the words of lexicon, folded, that are at least minCompoundPart bytes long and not
// ignored.
func partSet(lang string, lexicon []string) map[string]struct{} {
	m := stopSet(lang, lexicon...)
	for w := range m {
		if _, ok := detectShared[w]; ok || len(w) < minCompoundPart {
			delete(m, w)
		}
	}
	return m
}
