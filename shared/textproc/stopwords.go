package textproc

// stopSet folds each word the way the analyzer of lang folds text, so that a list can be written
// in plain spelling ("über", "euer") and still match folded tokens.
func stopSet(lang string, words ...string) map[string]struct{} {
	a := &Analyzer{lang: lang}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[a.Fold(w)] = struct{}{}
	}
	return m
}

// englishStop is the Snowball English stop list plus question filler that carries no procedure
// content ("please", "can", "should"). Negations stay terms: "won't start" and "doesn't unlock"
// are what operators type, and keyword phrases such as "not unlocking" need them.
var englishStop = stopSet("en",
	"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
	"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
	"by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
	"from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
	"him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
	"me", "more", "most", "my", "myself", "nor", "now", "of", "off", "on", "once",
	"only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
	"should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves",
	"then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
	"up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
	"why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t",
	"don", "can", "ll", "re", "ve", "d", "m",
	"please", "hi", "hello", "ok", "okay", "thanks", "need", "want", "get", "got", "let", "tell",
	"know", "whats", "im", "ive", "several", "someone", "something", "also", "still",
	"us", "wants", "wanted", "says", "said", "tells", "told", "basically", "literally", "gonna",
	"wanna", "gotta", "kinda", "yeah", "yep", "lol", "tbh", "pls", "plz", "thx",
)

// germanStop is the Snowball German stop list plus question filler, negations kept as terms
// ("springt nicht an", "kein Netz").
var germanStop = stopSet("de",
	"aber", "alle", "allem", "allen", "aller", "alles", "als", "also", "am", "an", "ander",
	"andere", "anderem", "anderen", "anderer", "anderes", "anderm", "andern", "anderr", "anders",
	"auch", "auf", "aus", "bei", "bin", "bis", "bist", "da", "damit", "dann", "der", "den", "des",
	"dem", "die", "das", "dass", "daß", "derselbe", "derselben", "denselben", "desselben",
	"demselben", "dieselbe", "dieselben", "dasselbe", "dazu", "dein", "deine", "deinem", "deinen",
	"deiner", "deines", "denn", "derer", "dessen", "dich", "dir", "du", "dies", "diese", "diesem",
	"diesen", "dieser", "dieses", "doch", "dort", "durch", "ein", "eine", "einem", "einen",
	"einer", "eines", "einig", "einige", "einigem", "einigen", "einiger", "einiges", "einmal",
	"er", "ihn", "ihm", "es", "etwas", "euer", "eure", "eurem", "euren", "eurer", "eures", "für",
	"gegen", "gewesen", "hab", "habe", "haben", "hat", "hatte", "hatten", "hier", "hin", "hinter",
	"ich", "mich", "mir", "ihr", "ihre", "ihrem", "ihren", "ihrer", "ihres", "euch", "im", "in",
	"indem", "ins", "ist", "jede", "jedem", "jeden", "jeder", "jedes", "jene", "jenem", "jenen",
	"jener", "jenes", "jetzt", "kann",
	"können", "konnte", "machen", "man", "manche", "manchem", "manchen", "mancher", "manches",
	"mein", "meine", "meinem", "meinen", "meiner", "meines", "mit", "muss", "musste", "nach",
	"nichts", "noch", "nun", "nur", "ob", "oder", "ohne", "sehr", "sein", "seine",
	"seinem", "seinen", "seiner", "seines", "selbst", "sich", "sie", "ihnen", "sind", "so",
	"solche", "solchem", "solchen", "solcher", "solches", "soll", "sollte", "sondern", "sonst",
	"über", "um", "und", "uns", "unsere", "unserem", "unseren", "unser", "unseres", "unter",
	"viel", "vom", "von", "vor", "während", "war", "waren", "warst", "was", "weg", "weil",
	"weiter", "welche", "welchem", "welchen", "welcher", "welches", "wenn", "werde", "werden",
	"wie", "wieder", "will", "wir", "wird", "wirst", "wo", "wollen", "wollte", "wurde", "wurden",
	"zu", "zum", "zur", "zwar", "zwischen", "bitte", "hallo", "gibt", "geht", "gerade", "mal",
	"muss", "müssen", "sollen", "darf", "dürfen", "wer", "wem", "wen", "warum", "wann", "welch",
	"ja", "nein", "schon", "eigentlich", "bzw", "z", "b", "usw", "jemand", "halt",
	"echt", "überhaupt", "irgendwie", "irgendwas", "sowas", "bisschen", "bissl", "eben", "quasi",
)
