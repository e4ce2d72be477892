def test_hidden(): pass
