package bot_test

import (
	"testing"

	"github.com/creatimus/pircan/internal/bottest"
)

func TestMain(m *testing.M) { bottest.Main(m) }
