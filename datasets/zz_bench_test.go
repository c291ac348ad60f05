package datasets
import ("testing";"path/filepath")
func BenchmarkReadDiabetes(b *testing.B){
	p:=filepath.Join(DataDir(""),DiabetesFile)
	for b.Loop(){ if _,err:=ReadFile(p);err!=nil{b.Fatal(err)} }
}
