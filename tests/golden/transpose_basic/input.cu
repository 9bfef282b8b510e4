#define BLK_DIM 16
__global__ void transpose(float *odata, float *idata, int width, int height)
{
    __shared__ float shared_data[BLK_DIM][BLK_DIM];
    unsigned int xIndex = blockIdx.x * BLK_DIM + threadIdx.x;
    unsigned int yIndex = blockIdx.y * BLK_DIM + threadIdx.y;
    if ((xIndex < width) && (yIndex < height))
        shared_data[threadIdx.y][threadIdx.x] = idata[yIndex * width + xIndex];
    __syncthreads();
    xIndex = blockIdx.y * BLK_DIM + threadIdx.x;
    yIndex = blockIdx.x * BLK_DIM + threadIdx.y;
    if ((xIndex < height) && (yIndex < width))
        odata[yIndex * height + xIndex] = shared_data[threadIdx.x][threadIdx.y];
}
