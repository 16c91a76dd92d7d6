package textproc

import (
	"slices"
	"testing"
)

func TestFoldMeetsUmlautSpellings(t *testing.T) {
	de := New("de")
	for _, pair := range [][2]string{
		{"Bußgeld", "Bussgeld"}, {"Schäden", "Schaeden"}, {"Größe", "Groesse"}, {"Überführung", "Ueberfuehrung"},
		{"LADESÄULE", "ladesaeule"},
	} {
		if a, b := de.Fold(pair[0]), de.Fold(pair[1]); a != b {
			t.Errorf("Fold(%q) = %q but Fold(%q) = %q", pair[0], a, pair[1], b)
		}
	}
	en := New("en")
	if got := en.Fold("Café Crème"); got != "cafe creme" {
		t.Errorf("English diacritics: %q", got)
	}
	if got := en.Fold("blue"); got != "blue" {
		t.Errorf("English keeps 'ue': %q", got)
	}
}

func TestTermsStemAndDropStopWords(t *testing.T) {
	en := New("en")
	if got, want := en.Terms("The scratches on the doors were photographed"), []string{"scratch", "door", "photograph"}; !slices.Equal(got, want) {
		t.Errorf("en terms %v, want %v", got, want)
	}
	if got := en.Terms("the car won't start"); !slices.Contains(got, "won") {
		t.Errorf("negation dropped: %v", got)
	}
	de := New("de")
	a, b := de.Terms("Die Schäden an den Autos"), de.Terms("Schaden am Auto")
	if !slices.Equal(a, b) {
		t.Errorf("German inflections do not meet: %v vs %v", a, b)
	}
	if got := de.Terms("Das Auto springt nicht an"); !slices.Contains(got, "nicht") {
		t.Errorf("German negation dropped: %v", got)
	}
}

func TestSplitterFindsCompoundParts(t *testing.T) {
	base := New("de")
	s := NewSplitter(base, "Die Scheibe ist kaputt. Der Akku ist leer. Die Bereitschaft hilft.")
	cases := map[string][]string{
		"windschutzscheibe":   {"scheibe"},
		"akkustand":           {"akku"},
		"bereitschaftsdienst": {"bereitschaft"},
		"kaputt":              nil,
	}
	for tok, want := range cases {
		got, _ := s.Split(base.Fold(tok))
		var stems []string
		for _, p := range got {
			stems = append(stems, base.Stem(p))
		}
		for _, w := range want {
			if !slices.Contains(stems, base.Stem(w)) {
				t.Errorf("Split(%q) = %v, want a part that stems like %q", tok, got, w)
			}
		}
		if want == nil && got != nil {
			t.Errorf("Split(%q) = %v, want nothing", tok, got)
		}
	}
	a := base.WithSplitter(s)
	if got := a.Terms("Windschutzscheibe"); !slices.Contains(got, a.Stem("scheibe")) {
		t.Errorf("analyzer does not emit compound parts: %v", got)
	}
}

func TestSupported(t *testing.T) {
	if !Supported("en") || !Supported("de") || Supported("fr") || Supported("EN") {
		t.Error("Supported is wrong")
	}
}
