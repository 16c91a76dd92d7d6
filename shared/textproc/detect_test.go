package textproc

import (
	"strings"
	"testing"
)

// Operator questions as they are typed into the console: short, chatty, typos, no punctuation.
var germanQuestions = []string{
	"Karre springt nicht an, Kunde steht auf dem Standstreifen",
	"kunde sagt handy tot auto geht nicht auf",
	"Blitzer-Foto bekommen, was tun",
	"Knöllchen",
	"Customer hat den Schlüssel verloren",
	"Reifen platt auf der A9, was jetzt?",
	"Kunde hat Kratzer an der Stoßstange gefunden",
	"Auto lässt sich nicht abschließen",
	"Akku fast leer, Ladesäule kaputt",
	"wo finde ich die tankkarte",
	"Kunde hat Hund im Auto transportiert, alles voller Haare",
	"Scheibe eingeschlagen, Handy geklaut",
	"Fahrer hatte nen Unfall, niemand verletzt",
	"Strafzettel wegen Falschparken, wer zahlt?",
	"Kunde will Geld zurück, Fahrt war zu teuer",
	"warnleuchte motor leuchtet gelb",
	"kann der kunde weiterfahren wenn die reifendruckanzeige blinkt",
	"Schlüsselkarte funktioniert nich",
	"App zeigt Fahrzeug nicht an",
	"Wie lange bewahren wir Fundsachen auf",
	"Polizei hat das Auto abgeschleppt",
	"Tür klemmt, Kunde kommt nicht raus",
	"Kindersitz fehlt im Fahrzeug",
	"es riecht nach Rauch im Innenraum",
	"Kunde beschwert sich über Dreck im Auto",
	"Bußgeldbescheid kam per Post, wie weiterleiten?",
	"Wagen steht im Halteverbot, Kunde nicht erreichbar",
	"motorhaube offen und qualmt",
	"Ladekabel steckt fest und lässt sich nicht lösen",
	"Kunde hat getankt aber falschen Sprit",
	"Fahrzeug wurde mit Graffiti beschmiert",
	"Navi geht nicht, Kunde findet Rückgabeort nicht",
	"Steinschlag in der Windschutzscheibe",
	"hab nen anruf, kunde sagt bremse quietscht",
	"Was mach ich bei einem Wildunfall",
	"Mietvertrag verlängern geht das",
	"Kunde möchte Buchung stornieren",
	"Airbag ausgelöst nach Auffahrunfall",
	"Parkschaden, Verursacher abgehauen",
	"Fenster lässt sich nicht mehr schliessen",
	"Kunde ist betrunken und will fahren",
	"SEV1 bestätigen bis wann",
	"Auto springt nich an batterie leer",
	"Geschwindigkeitsüberschreitung Foto, Fahrer ermitteln",
	"Kunde hat Sachen im Kofferraum vergessen",
	"Außenspiegel abgebrochen",
	"Fahrzeug verschmutzt übergeben bekommen",
	"Kunde sagt Klimaanlage bläst nur warm",
	"Unfallgegner will Personalien",
	"Handbremse löst nicht",
	"kunde kommt nicht ins auto, app haengt",
	"Schluessel steckt noch, Tuer zu",
	"Beule in der Fahrertür",
	"Wer zahlt die Abschleppkosten?",
	"Kunde fragt ob er den Hund mitnehmen darf",
	// held out: not used to choose the word lists
	"Kunde hört komisches Klackern beim Bremsen",
	"Innenraum stinkt nach Zigaretten",
	"Wohin mit dem gefundenen Rucksack",
	"Scheibenwischer gehen nicht",
	"Zentralverriegelung spinnt",
	"Fahrgast hat sich übergeben",
	"Kennzeichen fehlt hinten",
	"Ölstand zu niedrig Meldung",
	"darf der Kunde ins Ausland fahren",
	"Parkgebühren erstatten?",
	"Mein Kollege sagt das Lenkrad vibriert",
	"Wagen rollt weg obwohl P eingelegt",
	"Licht vorne links defekt",
	"Nummernschild verbogen",
	"Kunde kriegt die Heckklappe nicht zu",
	"Hupe hängt",
	"Tankdeckel klemmt",
	"Marder hat Kabel angeknabbert",
	"Wasser im Fußraum",
	"Hagelschaden am Dach",
	"Anhänger Kupplung erlaubt?",
	"Beifahrer hat Brille liegen lassen",
	"Reservierung abgelaufen, Kunde sauer",
	"Rechnung doppelt abgebucht",
	"Fahrtenbuch wird verlangt",
	"Schneeketten Pflicht?",
	"Kunde steckt im Parkhaus fest, Schranke zu",
	"Sitzheizung geht nicht aus",
	"Bordcomputer zeigt Fehlercode",
	"Rettungsgasse, Kunde steht im Stau, Akku bei 3 Prozent",
}

var englishQuestions = []string{
	"cust phone died car wont open",
	"windscreen chip",
	"scratch",
	"Customer says the car won't start, stuck on the hard shoulder",
	"flat tyre on the motorway what now",
	"got a speeding ticket in the mail, who pays",
	"battery at 5% and charger broken",
	"customer left his wallet in the boot",
	"door wont lock after trip end",
	"car smells like smoke, can we charge a cleaning fee",
	"engine warning light came on",
	"cust wants refund trip was too long",
	"dog hair all over the back seat",
	"key card not working",
	"app doesnt show the car",
	"towed by police, where is it",
	"accident no one hurt other driver drove off",
	"child seat missing",
	"how long do we keep lost items",
	"parking fine from the council",
	"car was vandalised overnight",
	"fuel card declined at the pump",
	"customer put petrol in a diesel",
	"sat nav not working cant find drop off",
	"dent in rear bumper before trip",
	"tyre pressure light flashing can he keep driving",
	"brakes squeaking badly",
	"customer drunk wants to drive",
	"hit a deer on the road",
	"extend rental possible?",
	"cancel booking pls",
	"airbag went off after a rear end collision",
	"window stuck open and its raining",
	"charging cable stuck in the car",
	"what is the SLA for a sev2",
	"someone keyed the side of the car",
	"customer locked keys inside",
	"wing mirror hanging off",
	"handbrake wont release",
	"aircon blowing hot air only",
	"other party wants my details",
	"headlight out on the passenger side",
	"coffee spilled on seat who cleans it",
	"vehicle returned dirty, photos attached",
	"customer cant end the trip in the app",
	"low tyre warning",
	"cracked windshield driver side",
	"got flashed by a speed camera",
	"car parked in a tow away zone",
	"customer lost the car, forgot where he parked",
	"bonnet wont close properly",
	"cust says theres a weird noise from the engine",
	"is a stone chip ok to drive",
	"who pays for the tow",
	"customer asks if dog is allowed",
	// held out: not used to choose the word lists
	"customer hears a clicking noise when braking",
	"interior stinks of cigarettes",
	"where do we send a found backpack",
	"wipers not working",
	"central locking acting up",
	"passenger threw up in the back",
	"rear number plate missing",
	"low oil message on dash",
	"can the customer take it abroad",
	"refund parking fees?",
	"my colleague says the steering wheel shakes",
	"car rolls away even in park",
	"front left headlight busted",
	"licence plate bent",
	"cust can't shut the tailgate",
	"horn keeps going",
	"fuel cap jammed",
	"rodent chewed the cables",
	"water in the footwell",
	"hail damage on the roof",
	"towbar allowed?",
	"passenger forgot glasses",
	"reservation expired customer angry",
	"charged twice on the invoice",
	"police want the driver log",
	"snow chains required?",
	"customer stuck in multi storey barrier closed",
	"seat heating won't turn off",
	"dashboard shows error code",
	"stuck in traffic jam battery at 3 percent",
}

func TestDetectLanguageCases(t *testing.T) {
	for _, tc := range []struct {
		text      string
		lang      string
		confident bool
	}{
		{"Karre springt nicht an, Kunde steht auf dem Standstreifen", "de", true},
		{"kunde sagt handy tot auto geht nicht auf", "de", true},
		{"cust phone died car wont open", "en", true},
		{"Blitzer-Foto bekommen, was tun", "de", true},
		{"windscreen chip", "en", true},
		{"Customer hat den Schlüssel verloren", "de", true},
		{"Knöllchen", "de", true},
		{"scratch", "en", true},
		{"12345", "en", false},
		{"", "en", false},
		{"   ?!  ", "en", false},
		{"SEV2 4711 0815", "en", false},
		{"ok", "en", false},
		{"was", "en", false},
	} {
		lang, conf := DetectLanguage(tc.text)
		if lang != tc.lang || conf != tc.confident {
			t.Errorf("DetectLanguage(%q) = %s, %v; want %s, %v", tc.text, lang, conf, tc.lang, tc.confident)
		}
	}
}

// TestDetectLanguageAccuracy requires 95 % of the operator questions of each language to be
// detected, and confidently so.
func TestDetectLanguageAccuracy(t *testing.T) {
	for _, set := range []struct {
		lang      string
		questions []string
	}{{"de", germanQuestions}, {"en", englishQuestions}} {
		if len(set.questions) < 40 {
			t.Fatalf("%s: only %d cases", set.lang, len(set.questions))
		}
		right := 0
		for _, q := range set.questions {
			if lang, conf := DetectLanguage(q); lang == set.lang && conf {
				right++
			} else {
				t.Logf("%s case missed: %q -> %s (confident %v)", set.lang, q, lang, conf)
			}
		}
		acc := float64(right) / float64(len(set.questions))
		t.Logf("%s: %d of %d right (%.1f %%)", set.lang, right, len(set.questions), 100*acc)
		if acc < 0.95 {
			t.Errorf("%s accuracy %.1f %% is below 95 %%", set.lang, 100*acc)
		}
	}
}

// TestDetectLanguageIsBounded checks that a long text is read only up to the bounds: what comes
// after the first maxDetectTokens words cannot change the answer.
func TestDetectLanguageIsBounded(t *testing.T) {
	head := strings.Repeat("the customer says the car ", maxDetectTokens/5+1)
	tail := strings.Repeat("Kunde sagt das Auto springt nicht an ", 200)
	if lang, conf := DetectLanguage(head + tail); lang != "en" || !conf {
		t.Errorf("the tail past the bound was read: %s %v", lang, conf)
	}
	huge := strings.Repeat("ä", 1<<20) + " nicht"
	if lang, _ := DetectLanguage(huge); lang != "de" {
		t.Errorf("one huge word: %s", lang)
	}
	if lang, conf := DetectLanguage(strings.Repeat("1", 1<<20) + " kunde sagt nicht"); lang != "en" || conf {
		t.Errorf("words past %d characters were read: %s %v", maxDetectRunes, lang, conf)
	}
	if lang, _ := DetectLanguage("\xff\xfe kunde sagt auto geht nicht"); lang != "de" {
		t.Errorf("invalid UTF-8: %s", lang)
	}
}

// TestFoldForLookupMatchesAnalyzer checks that the detector's fold reaches the same keys as the
// analyzer's, since it looks words up in sets the analyzer folded.
func TestFoldForLookupMatchesAnalyzer(t *testing.T) {
	for _, w := range []string{"schlüssel", "schluessel", "tür", "tuer", "bußgeld", "straße", "größe",
		"über", "ueber", "aee", "café", "crème", "naïve", "blue", "does", "zurück", "ñandú", "Ärger"} {
		for _, german := range []bool{false, true} {
			lang := "en"
			if german {
				lang = "de"
			}
			var buf [2 * maxTokenBytes]byte
			got := string(foldForLookup(buf[:0], []byte(strings.ToLower(w)), german))
			if want := New(lang).Fold(w); got != want {
				t.Errorf("%s fold of %q: %q, analyzer %q", lang, w, got, want)
			}
		}
	}
}

func TestDetectLanguageAllocatesNothing(t *testing.T) {
	q := "Kunde hat den Schlüssel verloren und steht vor der Tür, was tun?"
	if n := testing.AllocsPerRun(100, func() { DetectLanguage(q) }); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}

func BenchmarkDetectLanguage(b *testing.B) {
	qs := append(append([]string{}, germanQuestions...), englishQuestions...)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		DetectLanguage(qs[i%len(qs)])
	}
}
