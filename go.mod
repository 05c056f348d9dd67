module github.com/gpuscatter/gpuscatter

go 1.26.8

require (
	github.com/go-gl/glfw/v3.3/glfw v0.0.0-20260823155953-d41da22a9587
	github.com/stretchr/testify v1.12.1
	github.com/vulkan-go/vulkan v0.0.0-20221209234627-c0a353ae26c8
	github.com/x448/float16 v0.8.4
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
